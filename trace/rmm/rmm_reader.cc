#include "trace/rmm/rmm_reader.h"

#include <array>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "trace/core/bounded_line.h"
#include "trace/core/numbers.h"

namespace hbmsim::trace::rmm {
namespace {

constexpr std::string_view kHeader = "Thread,Time,Action,Pointer,Size,Stream";
constexpr size_t kMaxLine = 4096;  // real rows are under 100 characters
constexpr uint64_t kDayUs = uint64_t{86400} * 1000000;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// "123456" -> microseconds from a fraction of a second (at most 6 digits kept).
absl::StatusOr<uint64_t> FractionUs(std::string_view digits) {
  uint64_t us = 0;
  for (size_t i = 0; i < 6; ++i) {
    const char c = i < digits.size() ? digits[i] : '0';
    if (c < '0' || c > '9') return absl::InvalidArgumentError("bad fraction");
    us = us * 10 + static_cast<uint64_t>(c - '0');
  }
  for (size_t i = 6; i < digits.size(); ++i) {
    if (digits[i] < '0' || digits[i] > '9') return absl::InvalidArgumentError("bad fraction");
  }
  return us;
}

// "HH:MM:SS.ffffff" -> microseconds since midnight.
absl::StatusOr<uint64_t> TimeOfDayUs(std::string_view text) {
  const size_t dot = text.find('.');
  const std::string_view hms = text.substr(0, dot);
  if (hms.size() != 8 || hms[2] != ':' || hms[5] != ':') return absl::InvalidArgumentError("bad time");
  auto h = ParseU64(hms.substr(0, 2)), m = ParseU64(hms.substr(3, 2)), s = ParseU64(hms.substr(6, 2));
  if (!h.ok() || !m.ok() || !s.ok() || *h > 23 || *m > 59 || *s > 60)
    return absl::InvalidArgumentError("bad time");
  auto frac = dot == std::string_view::npos ? absl::StatusOr<uint64_t>(0) : FractionUs(text.substr(dot + 1));
  if (!frac.ok()) return frac.status();
  return ((*h * 60 + *m) * 60 + *s) * 1000000 + *frac;
}

// "1634567890.123456" -> microseconds.
absl::StatusOr<uint64_t> EpochUs(std::string_view text) {
  const size_t dot = text.find('.');
  auto seconds = ParseU64(text.substr(0, dot));
  if (!seconds.ok() || *seconds > UINT64_MAX / 1000000 - 1) return absl::InvalidArgumentError("bad time");
  auto frac = dot == std::string_view::npos ? absl::StatusOr<uint64_t>(0) : FractionUs(text.substr(dot + 1));
  if (!frac.ok()) return frac.status();
  return *seconds * 1000000 + *frac;
}

}  // namespace

enum class Action { kAllocate, kFree, kAllocateFailure };

struct RmmLogReader::Row {
  Action action = Action::kAllocate;
  uint64_t pointer = 0;
  uint64_t bytes = 0;
  uint64_t stream = 0;
  uint64_t time_us = 0;
};

RmmLogReader::RmmLogReader(std::unique_ptr<std::istream> in, std::string name)
    : in_(std::move(in)), name_(std::move(name)) {
  metadata_.entries.emplace_back("source", "rmm logging_resource_adaptor");
}

absl::StatusOr<std::unique_ptr<RmmLogReader>> RmmLogReader::Open(const std::string& path) {
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*in) return absl::NotFoundError(fmt::format("{}: cannot read", path));
  return std::unique_ptr<RmmLogReader>(new RmmLogReader(std::move(in), path));
}

std::unique_ptr<RmmLogReader> RmmLogReader::FromString(std::string text, std::string name) {
  return std::unique_ptr<RmmLogReader>(
      new RmmLogReader(std::make_unique<std::istringstream>(std::move(text)), std::move(name)));
}

bool RmmLogReader::IsRmmHeader(std::string_view first_line) { return Trim(first_line) == kHeader; }

std::string RmmLogReader::Location() const { return fmt::format("{}:{}", name_, line_); }

absl::Status RmmLogReader::Error(std::string_view what) const {
  return absl::InvalidArgumentError(fmt::format("{}:{}: {}", name_, line_, what));
}

absl::StatusOr<bool> RmmLogReader::Next(Event& e) {
  // Bounded: std::getline would hold a whole newline-free file in memory first.
  for (LineRead read; (read = ReadBoundedLine(*in_, line_text_, kMaxLine)) != LineRead::kEnd;) {
    ++line_;
    if (read == LineRead::kTooLong) return Error(fmt::format("line longer than {} characters", kMaxLine));
    const std::string_view line = Trim(line_text_);
    if (line.empty()) continue;
    if (line == kHeader) {
      header_seen_ = true;  // a second adaptor may have written its header again
      continue;
    }
    if (!header_seen_) return Error(fmt::format("not an RMM log: the first line must be '{}'", kHeader));
    absl::StatusOr<Row> row = ParseRow(line);
    if (!row.ok()) return Error(std::string(row.status().message()));
    e = Event{};
    if (absl::Status s = ToEvent(*row, e); !s.ok()) return Error(std::string(s.message()));
    return true;
  }
  if (in_->bad()) return Error("read error");
  if (!header_seen_) return Error(fmt::format("not an RMM log: no '{}' header", kHeader));
  return false;
}

absl::StatusOr<RmmLogReader::Row> RmmLogReader::ParseRow(std::string_view line) {
  std::array<std::string_view, 6> f;
  size_t n = 0;
  for (size_t start = 0; start <= line.size(); ++n) {
    const size_t comma = std::min(line.find(',', start), line.size());
    if (n < f.size()) f[n] = Trim(line.substr(start, comma - start));
    start = comma + 1;
  }
  if (n != f.size())
    return absl::InvalidArgumentError(fmt::format("expected 6 comma-separated fields, found {}", n));
  Row row;
  if (f[2] == "allocate") {
    row.action = Action::kAllocate;
  } else if (f[2] == "free" || f[2] == "deallocate") {
    row.action = Action::kFree;
  } else if (f[2] == "allocate failure") {
    row.action = Action::kAllocateFailure;
  } else {
    return absl::InvalidArgumentError(fmt::format("unknown action '{}'", f[2]));
  }
  auto time = ParseTime(f[1]);
  if (!time.ok()) return absl::InvalidArgumentError(fmt::format("bad time '{}'", f[1]));
  row.time_us = *time;
  auto pointer = ParseAddress(f[3]);
  // A failed allocate has no pointer; RMM prints a null one in whatever spelling.
  if (!pointer.ok() && row.action != Action::kAllocateFailure) {
    return absl::InvalidArgumentError(fmt::format("bad pointer '{}'", f[3]));
  }
  row.pointer = pointer.ok() ? *pointer : 0;
  auto bytes = ParseU64(f[4]);
  if (!bytes.ok())
    return absl::InvalidArgumentError(fmt::format("bad size: {}", std::string(bytes.status().message())));
  row.bytes = *bytes;
  auto stream = ParseAddress(f[5]);
  if (!stream.ok()) return absl::InvalidArgumentError(fmt::format("bad stream '{}'", f[5]));
  row.stream = *stream;
  return row;
}

absl::StatusOr<uint64_t> RmmLogReader::ParseTime(std::string_view text) {
  const bool time_of_day = text.find(':') != std::string_view::npos;
  absl::StatusOr<uint64_t> t = time_of_day ? TimeOfDayUs(text) : EpochUs(text);
  if (!t.ok()) return t.status();
  uint64_t us = *t + day_offset_us_;
  if (time_of_day && last_time_us_ && us + kDayUs / 2 < *last_time_us_) {
    day_offset_us_ += kDayUs;  // midnight passed
    us += kDayUs;
  }
  if (last_time_us_ && us < *last_time_us_) us = *last_time_us_;
  last_time_us_ = us;
  return us;
}

StreamId RmmLogReader::StreamFor(uint64_t raw) {
  if (raw == 0) return StreamId(0);
  auto [it, inserted] = stream_ids_.try_emplace(raw, stream_order_.size() + 1);
  if (inserted) stream_order_.emplace_back(raw, it->second);
  return StreamId(it->second);
}

absl::Status RmmLogReader::ToEvent(const Row& row, Event& e) {
  e.time_us = row.time_us;
  e.stream = StreamFor(row.stream);
  if (row.action == Action::kAllocateFailure) {
    failures_.push_back({line_, row.bytes, e.stream, allocs_});
    label_ = fmt::format("rmm_allocate_failure:{}", row.bytes);
    e.kind = EventKind::kMark;
    // A mark has no stream in the trace format (only buffer events do), so
    // `convert` could not write it; the failure record above keeps it.
    e.stream = StreamId(0);
    e.label = label_;
    return absl::OkStatus();
  }
  if (row.action == Action::kAllocate) {
    auto [it, inserted] = live_.try_emplace(row.pointer, LiveBuffer{next_id_, row.bytes});
    if (!inserted) {
      return absl::InvalidArgumentError(
          fmt::format("allocate of {:#x}, which is still live (buffer {})", row.pointer, it->second.id));
    }
    ++allocs_;
    e.kind = EventKind::kAlloc;
    e.id = next_id_++;
    e.bytes = Bytes(row.bytes);
    e.addr = row.pointer;
    return absl::OkStatus();
  }
  const auto it = live_.find(row.pointer);
  if (it == live_.end())
    return absl::InvalidArgumentError(fmt::format("free of {:#x}, which is not live", row.pointer));
  if (it->second.bytes != row.bytes) {
    return absl::InvalidArgumentError(
        fmt::format("free of {:#x} with size {}, but it was allocated with size {}", row.pointer, row.bytes,
                    it->second.bytes));
  }
  e.kind = EventKind::kFree;
  e.id = it->second.id;
  live_.erase(it);
  return absl::OkStatus();
}

}  // namespace hbmsim::trace::rmm
