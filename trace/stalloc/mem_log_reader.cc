#include "trace/stalloc/mem_log_reader.h"

#include <array>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "trace/core/bounded_line.h"
#include "trace/core/numbers.h"
#include "trace/text/field_rules.h"

namespace hbmsim::trace::stalloc {
namespace {

constexpr size_t kMaxLine = 4096;  // event lines are under 60 characters, markers under 200
constexpr std::string_view kFilePrefix = "mem_log_dev";
constexpr std::string_view kFileSuffix = ".txt";

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// How an ostream prints a void*: "0" for null, else "0x" and lowercase hex.
bool IsPrintedPointer(std::string_view s) {
  if (s == "0") return true;
  if (s.size() < 3 || s.substr(0, 2) != "0x") return false;
  for (char c : s.substr(2)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  }
  return true;
}

std::string WithUnderscores(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c == ' ' || c == '\t') c = '_';
  }
  return out;
}

// "F-start", "B-end", ...: the phases STAlloc's module hooks write.
bool IsLayerPhase(std::string_view v) {
  return v.size() >= 5 && (v[0] == 'F' || v[0] == 'B' || v[0] == 'W') && v[1] == '-' &&
         (v.substr(2) == "start" || v.substr(2) == "end");
}

}  // namespace

std::optional<uint64_t> DeviceFromMemLogName(std::string_view path) {
  const size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (!base.starts_with(kFilePrefix) || !base.ends_with(kFileSuffix)) return std::nullopt;
  base = base.substr(kFilePrefix.size(), base.size() - kFilePrefix.size() - kFileSuffix.size());
  if (!AllDigits(base)) return std::nullopt;
  absl::StatusOr<uint64_t> device = ParseU64(base);
  if (!device.ok()) return std::nullopt;
  return *device;
}

MemLogReader::MemLogReader(std::unique_ptr<std::istream> in, std::string name)
    : in_(std::move(in)), name_(std::move(name)) {
  metadata_.entries.emplace_back("source", "stalloc mem_log");
  if (std::optional<uint64_t> device = DeviceFromMemLogName(name_)) {
    device_ = DeviceId(*device);
    metadata_.entries.emplace_back("device", fmt::format("{}", *device));
  }
}

absl::StatusOr<std::unique_ptr<MemLogReader>> MemLogReader::Open(const std::string& path) {
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*in) return absl::NotFoundError(fmt::format("{}: cannot read", path));
  return std::unique_ptr<MemLogReader>(new MemLogReader(std::move(in), path));
}

std::unique_ptr<MemLogReader> MemLogReader::FromString(std::string_view text, std::string name) {
  return std::unique_ptr<MemLogReader>(
      new MemLogReader(std::make_unique<std::istringstream>(std::string(text)), std::move(name)));
}

bool MemLogReader::LooksLikeMemLog(std::string_view head) {
  // Skip blank lines; look at the first one only.
  std::string_view line;
  while (!head.empty()) {
    const size_t nl = head.find('\n');
    line = TrimLine(head.substr(0, nl));
    head = nl == std::string_view::npos ? std::string_view() : head.substr(nl + 1);
    if (!line.empty()) break;
  }
  if (line.starts_with("Iteration Index") || line.starts_with("micro-batch")) return true;
  std::array<std::string_view, 4> f;
  const size_t n = SplitFields(line, f.data(), f.size());
  if (n == 0) return false;
  // No text-trace keyword contains "->": a layer marker.
  if (f[0].find("->") != std::string_view::npos) return true;
  return n == 4 && (f[0] == "0" || f[0] == "1") && IsPrintedPointer(f[1]) && AllDigits(f[2]) &&
         IsPrintedPointer(f[3]);
}

std::string MemLogReader::Location() const { return fmt::format("{}:{}", name_, line_); }

absl::Status MemLogReader::Error(std::string_view what) const {
  return absl::InvalidArgumentError(fmt::format("{}:{}: {}", name_, line_, what));
}

absl::StatusOr<bool> MemLogReader::Next(Event& e) {
  while (true) {
    const LineRead read = ReadBoundedLine(*in_, line_text_, kMaxLine);
    if (read == LineRead::kEnd) break;
    ++line_;
    if (read == LineRead::kTooLong) return Error(fmt::format("line longer than {} characters", kMaxLine));
    const std::string_view line = TrimLine(line_text_);
    if (line.empty()) continue;
    e = Event{};
    e.device = device_;
    // Event lines never contain ':'; every marker has one.
    if (line.find(':') != std::string_view::npos) {
      if (absl::Status s = MarkerLine(line, e); !s.ok()) return Error(std::string(s.message()));
      return true;
    }
    absl::StatusOr<bool> produced = EventLine(line, e);
    if (!produced.ok()) return Error(std::string(produced.status().message()));
    if (*produced) return true;
  }
  if (in_->bad()) return Error("read error");
  return false;
}

absl::StatusOr<bool> MemLogReader::EventLine(std::string_view line, Event& e) {
  std::array<std::string_view, 4> f;
  const size_t n = SplitFields(line, f.data(), f.size());
  if (n != f.size()) {
    return absl::InvalidArgumentError(fmt::format(
        "expected an event 'status ptr size stream' (4 fields) or a marker 'name : value', found {} field{}",
        n, n == 1 ? "" : "s"));
  }
  if (f[0] != "0" && f[0] != "1") {
    return absl::InvalidArgumentError(fmt::format("status must be 1 (alloc) or 0 (free), found '{}'", f[0]));
  }
  absl::StatusOr<uint64_t> ptr = ParseAddress(f[1]);
  if (!ptr.ok()) return absl::InvalidArgumentError(fmt::format("bad pointer '{}'", f[1]));
  absl::StatusOr<uint64_t> bytes = ParseU64(f[2]);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(fmt::format("bad size: {}", std::string(bytes.status().message())));
  }
  absl::StatusOr<uint64_t> stream = ParseAddress(f[3]);
  if (!stream.ok()) return absl::InvalidArgumentError(fmt::format("bad stream '{}'", f[3]));
  const bool alloc = f[0] == "1";
  if (*ptr == 0) {
    // A zero-byte request gets a null pointer and no memory: nothing to replay.
    if (*bytes != 0) {
      return absl::InvalidArgumentError(
          fmt::format("{} of {} bytes with a null pointer", alloc ? "alloc" : "free", *bytes));
    }
    ++null_pointer_lines_;
    return false;
  }
  e.stream = StreamFor(*stream);
  absl::Status s = alloc ? Alloc(*ptr, *bytes, e) : Free(*ptr, *bytes, e);
  if (!s.ok()) return s;
  return true;
}

absl::Status MemLogReader::Alloc(uint64_t ptr, uint64_t bytes, Event& e) {
  auto [it, inserted] = live_.try_emplace(ptr, LiveBuffer{next_id_, bytes, line_});
  if (!inserted) {
    return absl::InvalidArgumentError(
        fmt::format("alloc of {:#x}, which is still live (buffer {}, allocated on line {})", ptr,
                    it->second.id, it->second.line));
  }
  e.kind = EventKind::kAlloc;
  e.id = next_id_++;
  e.bytes = Bytes(bytes);
  e.addr = ptr;
  return absl::OkStatus();
}

absl::Status MemLogReader::Free(uint64_t ptr, uint64_t bytes, Event& e) {
  const auto it = live_.find(ptr);
  if (it == live_.end())
    return absl::InvalidArgumentError(fmt::format("free of {:#x}, which is not live", ptr));
  if (it->second.bytes != bytes) {
    return absl::InvalidArgumentError(
        fmt::format("free of {:#x} with size {}, but it was allocated with size {} on line {}", ptr, bytes,
                    it->second.bytes, it->second.line));
  }
  e.kind = EventKind::kFree;
  e.id = it->second.id;
  live_.erase(it);
  return absl::OkStatus();
}

absl::Status MemLogReader::MarkerLine(std::string_view line, Event& e) {
  const size_t colon = line.rfind(':');
  const std::string_view name = TrimLine(line.substr(0, colon));
  const std::string_view value = TrimLine(line.substr(colon + 1));
  if (name.empty() || value.empty()) {
    return absl::InvalidArgumentError(fmt::format("marker '{}' needs a name and a value around ':'", line));
  }
  if (name == "Iteration Index") {
    if (!AllDigits(value) && value != "end") {
      return absl::InvalidArgumentError(
          fmt::format("iteration must be a number or 'end', found '{}'", value));
    }
    label_ = fmt::format("iteration={}", value);
  } else if (name == "micro-batch") {
    if (value != "F" && value != "B" && value != "W") {
      return absl::InvalidArgumentError(fmt::format("micro-batch must be F, B or W, found '{}'", value));
    }
    label_ = fmt::format("micro_batch={}", value);
  } else if (name.find("->") != std::string_view::npos && name.ends_with("Layer")) {
    if (!IsLayerPhase(value)) {
      return absl::InvalidArgumentError(
          fmt::format("layer phase must be F, B or W then -start or -end, found '{}'", value));
    }
    const std::string_view module = TrimLine(name.substr(0, name.size() - 5));
    label_ = fmt::format("layer={}:{}", WithUnderscores(module), value);
  } else {
    label_ = fmt::format("{}={}", WithUnderscores(name), WithUnderscores(value));
  }
  for (char c : label_) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError("marker holds a control character");
    }
  }
  // Blanks are gone and controls refused: what is left to fail is UTF-8.
  if (!CheckTextField("mark label", label_).ok())
    return absl::InvalidArgumentError("marker is not valid UTF-8");
  e.kind = EventKind::kMark;
  e.label = label_;
  return absl::OkStatus();
}

StreamId MemLogReader::StreamFor(uint64_t raw) {
  if (raw == 0) return StreamId(0);
  auto [it, inserted] = stream_ids_.try_emplace(raw, stream_order_.size() + 1);
  if (inserted) stream_order_.emplace_back(raw, it->second);
  return StreamId(it->second);
}

}  // namespace hbmsim::trace::stalloc
