#include "trace/bfc_dump/parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <limits>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "trace/bfc_dump/context_lines.h"
#include "trace/bfc_dump/line_parsers.h"
#include "trace/bfc_dump/line_text.h"
#include "trace/core/bounded_line.h"

namespace hbmsim::trace::bfc_dump {
namespace {

// The parts of DumpMemoryLog in the order it prints them.
enum class Section { kHeader, kTitle, kBins, kBinFor, kChunks, kSummary, kSumTotal, kPool, kStats };

constexpr size_t kUnmatchedKept = 20;
// Dump lines are under 300 characters. Longer lines (a progress bar redrawn
// with '\r', a config printed on one line) are skipped without being held.
constexpr size_t kMaxLineBytes = size_t{1} << 20;
constexpr double kTimeJumpSeconds = 1.0;

class LogParser {
 public:
  explicit LogParser(std::string_view source) { log_.source = std::string(source); }

  void Line(std::string_view raw, int number);
  // A line too long to be part of a dump, skipped unread: it counts as unmatched.
  void LongLine(int number);
  BfcLog Finish() &&;
  // The first dump line with a number past 64 bits, or OK.
  const absl::Status& error() const { return error_; }

 private:
  bool HandleMessage(std::string_view msg, int line);
  bool HandleOomLine(OomLine oom, int line);
  bool HandleBody(std::string_view msg, int line);
  bool HandleChunkList(std::string_view msg, int line);
  bool HandleTail(std::string_view msg, int line);
  // The dump a line of part `s` belongs to: the current one, or a new one.
  BfcDump& Open(Section s, int line);
  void StartDump(int line);
  // Lines are missing from the current dump here.
  void Interrupt();
  void CountUnmatched(int line);

  BfcLog log_;
  std::optional<BfcDump> current_;
  Section section_ = Section::kHeader;
  bool closed_ = false;
  std::optional<double> last_time_;
  absl::Status error_;
};

// A dump line's number that no uint64 holds: a decimal run that overflows, or
// more than 16 hex digits after "at ". Only lines that start like a dump line
// are judged, so a long number elsewhere in a log is no error.
std::optional<std::string_view> OversizedDumpNumber(std::string_view msg) {
  static constexpr std::string_view kDumpLineStarts[] = {"InUse", "Free ",       "Chunk ",
                                                         "Bin (", "Next region", "Sum Total"};
  if (std::none_of(std::begin(kDumpLineStarts), std::end(kDumpLineStarts),
                   [&](std::string_view s) { return msg.starts_with(s); })) {
    return std::nullopt;
  }
  for (size_t i = 0; i < msg.size();) {
    size_t end = i;
    while (end < msg.size() && std::isxdigit(static_cast<unsigned char>(msg[end]))) ++end;
    const std::string_view run = msg.substr(i, end - i);
    const bool decimal =
        !run.empty() && std::all_of(run.begin(), run.end(), [](char c) { return c >= '0' && c <= '9'; });
    uint64_t v = 0;
    if (decimal &&
        std::from_chars(run.data(), run.data() + run.size(), v).ec == std::errc::result_out_of_range) {
      return run;
    }
    if (run.size() > 16 && msg.substr(0, i).ends_with("at ")) return run;
    i = end == i ? i + 1 : end;
  }
  return std::nullopt;
}

void LogParser::Line(std::string_view raw, int number) {
  ++log_.lines;
  const std::string_view trimmed = TrimSpaces(raw);
  if (trimmed.starts_with("#")) {
    ++log_.comment_lines;
    if (trimmed.find("---- window") != std::string_view::npos) Interrupt();
    return;
  }
  bool truncated = false;
  const LogLine ll = SplitLogPrefix(CutTruncation(raw, truncated));
  if (ll.time_sec) {
    if (last_time_ && *ll.time_sec < *last_time_ - kTimeJumpSeconds) closed_ = true;
    last_time_ = ll.time_sec;
  }
  const std::string_view msg = TrimSpaces(ll.message);
  const bool matched = !msg.empty() && HandleMessage(msg, number);
  if (truncated) {
    ++log_.truncated_lines;
    if (current_ && !closed_) ++current_->truncated_lines;
    Interrupt();
  } else if (!matched && !msg.empty()) {
    if (const std::optional<std::string_view> n = OversizedDumpNumber(msg); n && error_.ok()) {
      error_ = absl::InvalidArgumentError(
          fmt::format("{}:{}: number '{}' does not fit in 64 bits", log_.source, number, *n));
    }
    CountUnmatched(number);
    // A human's elision ("... A very long repetition of this message") loses
    // lines; another thread's log line in between does not.
    if (!ll.had_prefix) Interrupt();
  }
}

void LogParser::LongLine(int number) {
  ++log_.lines;
  CountUnmatched(number);
  Interrupt();
}

BfcLog LogParser::Finish() && {
  if (current_) log_.dumps.push_back(std::move(*current_));
  return std::move(log_);
}

bool LogParser::HandleMessage(std::string_view msg, int line) {
  if (std::optional<OomLine> oom = MatchOomLine(msg)) return HandleOomLine(std::move(*oom), line);
  if (msg.starts_with("If the cause is memory fragmentation") ||
      msg.starts_with("If this is caused by memory fragmentation") ||
      msg == "Current allocation summary follows.") {
    return true;  // the rest of the header
  }
  if (msg.starts_with("Garbage collection: deallocate free memory regions")) {
    ++log_.gc_warnings;
    return true;
  }
  if (std::optional<SubAllocatorFailure> f = MatchSubAllocatorFailure(msg)) {
    f->line = line;
    log_.sub_allocator_failures.push_back(*f);
    return true;
  }
  if (std::optional<DeviceCreated> d = MatchDeviceCreated(msg)) {
    d->line = line;
    log_.devices.push_back(std::move(*d));
    return true;
  }
  if (std::optional<TensorOom> t = MatchTensorOom(msg)) {
    t->line = line;
    log_.tensor_ooms.push_back(std::move(*t));
    return true;
  }
  return HandleBody(msg, line) || HandleChunkList(msg, line) || HandleTail(msg, line);
}

bool LogParser::HandleOomLine(OomLine oom, int line) {
  if (auto* warning = std::get_if<NotAFailureWarning>(&oom)) {
    warning->line = line;
    log_.not_a_failure.push_back(std::move(*warning));
    return true;
  }
  Header& h = std::get<Header>(oom);
  h.line = line;
  // The 2015-16 line follows the dump it belongs to.
  const bool trails_dump = h.form == HeaderForm::kGpuBfc2015 && current_ && !closed_ && !current_->header;
  if (!trails_dump) StartDump(line);
  if (current_->allocator.empty()) current_->allocator = h.allocator;
  current_->header = std::move(h);
  current_->last_line = line;
  if (trails_dump) closed_ = true;
  return true;
}

bool LogParser::HandleBody(std::string_view msg, int line) {
  if (msg.starts_with("BFCAllocator dump for ")) {
    if (current_ && !closed_ && section_ >= Section::kTitle) closed_ = true;  // a second title
    BfcDump& d = Open(Section::kTitle, line);
    d.has_title = true;
    if (d.allocator.empty()) d.allocator = std::string(TrimSpaces(msg.substr(22)));
    return true;
  }
  if (std::optional<BinLine> b = MatchBinLine(msg)) {
    if (current_ && !closed_ && section_ == Section::kBins && !current_->bins.empty() &&
        b->bin_size <= current_->bins.back().bin_size) {
      closed_ = true;  // bins restart: another dump without a header
    }
    b->line = line;
    Open(Section::kBins, line).bins.push_back(std::move(*b));
    return true;
  }
  if (std::optional<BinFor> b = MatchBinFor(msg)) {
    b->line = line;
    Open(Section::kBinFor, line).bin_for.push_back(std::move(*b));
    return true;
  }
  if (std::optional<ChunkStateLine> s = MatchChunkState(msg)) {
    s->line = line;
    BfcDump& d = Open(Section::kBinFor, line);
    if (d.bin_for.empty()) d.bin_for.emplace_back();  // its "Bin for" line was cut off
    d.bin_for.back().chunks.push_back(std::move(*s));
    return true;
  }
  return false;
}

bool LogParser::HandleChunkList(std::string_view msg, int line) {
  if (std::optional<uint64_t> size = MatchRegionLine(msg)) {
    Open(Section::kChunks, line).regions.push_back(Region{line, *size, {}});
    return true;
  }
  if (std::optional<Chunk> c = MatchChunkLine(msg)) {
    c->line = line;
    BfcDump& d = Open(Section::kChunks, line);
    if (d.regions.empty()) d.regions.push_back(Region{line, std::nullopt, {}});  // TF <= 1.13
    d.regions.back().chunks.push_back(std::move(*c));
    return true;
  }
  if (msg.starts_with("Summary of in-use Chunks by size:")) {
    Open(Section::kSummary, line).has_summary_title = true;
    return true;
  }
  if (std::optional<SummaryLine> s = MatchSummaryLine(msg)) {
    if (current_ && !closed_ && section_ == Section::kSummary && !current_->summary.empty() &&
        s->size <= current_->summary.back().size) {
      closed_ = true;
    }
    s->line = line;
    Open(Section::kSummary, line).summary.push_back(std::move(*s));
    return true;
  }
  return false;
}

bool LogParser::HandleTail(std::string_view msg, int line) {
  if (std::optional<HumanBytes> total = MatchSumTotal(msg)) {
    Open(Section::kSumTotal, line).sum_total = std::move(*total);
    return true;
  }
  if (std::optional<PoolLine> p = MatchPoolLine(msg)) {
    p->line = line;
    Open(Section::kPool, line).pool = *p;
    return true;
  }
  if (msg.starts_with("Allocator memory summary:") || msg.starts_with("Allocator region growth hint:") ||
      msg.starts_with("Spatial partitioning summary")) {
    BfcDump& d = Open(Section::kPool, line);
    d.head_summary.emplace_back(msg);
    if (auto m = MatchHeadMemorySummary(msg)) d.head_memory = std::move(*m);
    return true;
  }
  if (msg == "Stats:") {
    Open(Section::kStats, line);
    return true;
  }
  Stats probe;
  if (MatchStatsLine(msg, probe)) {
    MatchStatsLine(msg, Open(Section::kStats, line).stats);
    return true;
  }
  if (current_ && !closed_ && IsOccupancyLine(msg)) {
    current_->occupancy = std::string(msg);
    current_->last_line = line;
    closed_ = true;
    return true;
  }
  return false;
}

BfcDump& LogParser::Open(Section s, int line) {
  if (!current_ || closed_ || s < section_) StartDump(line);
  section_ = std::max(section_, s);
  current_->last_line = line;
  return *current_;
}

void LogParser::StartDump(int line) {
  if (current_) log_.dumps.push_back(std::move(*current_));
  current_.emplace();
  current_->first_line = line;
  current_->last_line = line;
  section_ = Section::kHeader;
  closed_ = false;
}

void LogParser::Interrupt() {
  if (!current_ || closed_) return;
  ++current_->gaps;
  if (section_ == Section::kChunks) current_->chunk_list_interrupted = true;
}

void LogParser::CountUnmatched(int line) {
  ++log_.unmatched_lines;
  if (log_.first_unmatched.size() < kUnmatchedKept) log_.first_unmatched.push_back(line);
}

absl::StatusOr<BfcLog> Finish(LogParser& parser, std::string_view source) {
  if (!parser.error().ok()) return parser.error();
  BfcLog log = std::move(parser).Finish();
  if (log.dumps.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: no BFC allocator dump found ({} lines, {} not part of a dump)", source, log.lines,
                    log.unmatched_lines));
  }
  return log;
}

std::string_view WithoutCarriageReturn(std::string_view line) {
  if (line.ends_with('\r')) line.remove_suffix(1);
  return line;
}

}  // namespace

absl::StatusOr<BfcLog> ParseBfcLog(std::string_view text, std::string_view source) {
  LogParser parser(source);
  int number = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    parser.Line(WithoutCarriageReturn(text.substr(0, eol)), ++number);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
  }
  return Finish(parser, source);
}

absl::StatusOr<BfcLog> ReadBfcLogFile(const std::string& path) {
  // Line by line: training logs run to gigabytes, the dumps in them do not.
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(fmt::format("{}: cannot read", path));
  LogParser parser(path);
  std::string line;
  int number = 0;
  for (LineRead read; (read = ReadBoundedLine(in, line, kMaxLineBytes)) != LineRead::kEnd;) {
    if (read == LineRead::kLine) {
      parser.Line(WithoutCarriageReturn(line), ++number);
      continue;
    }
    parser.LongLine(++number);
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  if (in.bad()) return absl::DataLossError(fmt::format("{}: read error after line {}", path, number));
  return Finish(parser, path);
}

}  // namespace hbmsim::trace::bfc_dump
