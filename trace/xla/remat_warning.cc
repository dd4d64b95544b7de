#include "trace/xla/remat_warning.h"

#include <fstream>
#include <limits>

#include "fmt/format.h"
#include "trace/core/bounded_line.h"
#include "trace/core/human_bytes.h"
#include "trace/xla/text_lines.h"

namespace hbmsim::trace::xla {
namespace {

constexpr std::string_view kMarker = "Can't reduce memory use below ";

// "16.00GiB (17179869184 bytes)" followed by `then`: the text and the number.
bool TakeAmount(std::string_view& s, std::string_view then, std::string& text, uint64_t& bytes) {
  const size_t open = s.find(" (");
  if (open == std::string_view::npos || open == 0) return false;
  text = std::string(s.substr(0, open));
  s.remove_prefix(open + 2);
  std::optional<uint64_t> n = ConsumeDecimal(s);
  if (!n || !Consume(s, " bytes)") || !Consume(s, then)) return false;
  bytes = *n;
  return true;
}

absl::StatusOr<RematWarning> ParseWarning(std::string_view s) {
  RematWarning w;
  if (!TakeAmount(s, " by rematerialization; only reduced to ", w.limit_text, w.limit) ||
      !TakeAmount(s, ", down from ", w.after_text, w.after) ||
      !TakeAmount(s, " originally", w.before_text, w.before)) {
    return absl::InvalidArgumentError(
        "expected \"Can't reduce memory use below A (a bytes) by rematerialization; only reduced to B (b "
        "bytes), "
        "down from C (c bytes) originally\"");
  }
  return w;
}

std::string Amount(uint64_t bytes) {
  return fmt::format("{:>14} ({})", bytes, HumanReadableNumBytes(Bytes(bytes)));
}

}  // namespace

absl::StatusOr<std::optional<RematWarning>> ParseRematLine(std::string_view line, int number,
                                                           std::string_view source) {
  const size_t at = line.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  absl::StatusOr<RematWarning> w = ParseWarning(line.substr(at + kMarker.size()));
  if (!w.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: {}", source, number, std::string(w.status().message())));
  }
  w->line = number;
  return std::optional<RematWarning>(std::move(*w));
}

absl::StatusOr<std::vector<RematWarning>> FindRematWarnings(std::string_view log, std::string_view source) {
  std::vector<RematWarning> out;
  LineCursor lines(log);
  while (std::optional<std::string_view> line = lines.Next()) {
    absl::StatusOr<std::optional<RematWarning>> w = ParseRematLine(*line, lines.line(), source);
    if (!w.ok()) return w.status();
    if (*w) out.push_back(std::move(**w));
  }
  return out;
}

// Lines are read bounded: std::getline would hold a newline-free log whole.
constexpr size_t kMaxLogLineBytes = size_t{1} << 20;

absl::StatusOr<std::vector<RematWarning>> ReadRematWarningsFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(fmt::format("{}: cannot read", path));
  std::vector<RematWarning> out;
  std::string line;
  int number = 0;
  for (LineRead read; (read = ReadBoundedLine(in, line, kMaxLogLineBytes)) != LineRead::kEnd;) {
    if (read == LineRead::kTooLong) {
      // No warning is this long (a progress bar redrawn with '\r' is): skip it unread.
      ++number;
      in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
      continue;
    }
    std::string_view text = line;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    absl::StatusOr<std::optional<RematWarning>> w = ParseRematLine(text, ++number, path);
    if (!w.ok()) return w.status();
    if (*w) out.push_back(std::move(**w));
  }
  if (in.bad()) return absl::DataLossError(fmt::format("{}: read error after line {}", path, number));
  return out;
}

std::string RenderRematText(const std::vector<RematWarning>& warnings) {
  std::string out;
  for (const RematWarning& w : warnings) {
    out += fmt::format(
        "XLA rematerialization warning (line {}): the compiler could not fit the program under its limit\n",
        w.line);
    out += fmt::format("  remat target (limit):  {}\n", Amount(w.limit));
    out += fmt::format("  peak after remat:      {}\n", Amount(w.after));
    out += fmt::format("  peak before remat:     {}\n", Amount(w.before));
    out += fmt::format("  over the target:       {}\n", Amount(w.over_target()));
    out += fmt::format("  saved by remat:        {}\n", Amount(w.saved()));
    out += fmt::format(
        "  what-if: the program needs at least {} bytes ({}) of live buffers at its peak (XLA's "
        "no-fragmentation "
        "count), so no allocator fits it in less; a device limit must exceed that plus fragmentation, and "
        "the "
        "remat target must grow by at least {} bytes for the pass to succeed\n",
        w.after, HumanReadableNumBytes(Bytes(w.after)), w.over_target());
  }
  return out;
}

}  // namespace hbmsim::trace::xla
