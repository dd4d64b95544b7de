#include "trace/csapp/rep_reader.h"

#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "trace/core/bounded_line.h"
#include "trace/core/numbers.h"

namespace hbmsim::trace::csapp {
namespace {

constexpr size_t kMaxLine = 4096;  // operation lines are under 40 characters
constexpr std::array<std::string_view, 4> kHeaderNames = {"suggested heap size", "number of ids",
                                                          "number of operations", "weight"};

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

absl::StatusOr<uint64_t> Field(std::string_view what, std::string_view text) {
  absl::StatusOr<uint64_t> v = ParseU64(text);
  if (!v.ok()) {
    return absl::InvalidArgumentError(fmt::format("bad {}: {}", what, std::string(v.status().message())));
  }
  return *v;
}

}  // namespace

RepReader::RepReader(std::unique_ptr<std::istream> in, std::string name)
    : in_(std::move(in)), name_(std::move(name)) {}

absl::StatusOr<std::unique_ptr<RepReader>> RepReader::Open(const std::string& path) {
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*in) return absl::NotFoundError(fmt::format("{}: cannot read", path));
  return Start(std::unique_ptr<RepReader>(new RepReader(std::move(in), path)));
}

absl::StatusOr<std::unique_ptr<RepReader>> RepReader::FromString(std::string_view text, std::string name) {
  return Start(std::unique_ptr<RepReader>(
      new RepReader(std::make_unique<std::istringstream>(std::string(text)), std::move(name))));
}

absl::StatusOr<std::unique_ptr<RepReader>> RepReader::Start(std::unique_ptr<RepReader> reader) {
  if (absl::Status s = reader->ReadHeader(); !s.ok()) return s;
  const RepHeader& h = reader->header_;
  reader->metadata_.entries = {{"source", "cs:app malloc lab .rep"},
                               {"rep_header_1", fmt::format("{}", h.line1)},
                               {"rep_ids", fmt::format("{}", h.num_ids)},
                               {"rep_operations", fmt::format("{}", h.num_ops)},
                               {"rep_header_4", fmt::format("{}", h.line4)}};
  return reader;
}

bool RepReader::LooksLikeRep(std::string_view head) {
  while (!head.empty()) {
    const size_t nl = head.find('\n');
    const std::string_view line = TrimLine(head.substr(0, nl));
    if (!line.empty()) return AllDigits(line);
    if (nl == std::string_view::npos) break;
    head.remove_prefix(nl + 1);
  }
  return false;
}

std::string RepReader::Location() const { return fmt::format("{}:{}", name_, line_); }

absl::Status RepReader::Error(std::string_view what) const { return ErrorAt(line_, what); }

absl::Status RepReader::ErrorAt(int line, std::string_view what) const {
  return absl::InvalidArgumentError(fmt::format("{}:{}: {}", name_, line, what));
}

absl::StatusOr<std::optional<std::string_view>> RepReader::NextLine() {
  while (true) {
    const LineRead read = ReadBoundedLine(*in_, line_text_, kMaxLine);
    if (read == LineRead::kEnd) break;
    ++line_;
    if (read == LineRead::kTooLong) return Error(fmt::format("line longer than {} characters", kMaxLine));
    const std::string_view line = TrimLine(line_text_);
    if (!line.empty()) return std::optional<std::string_view>(line);
  }
  if (in_->bad()) return Error("read error");
  return std::optional<std::string_view>();
}

absl::Status RepReader::ReadHeader() {
  std::array<uint64_t, 4> values = {};
  for (size_t i = 0; i < values.size(); ++i) {
    absl::StatusOr<std::optional<std::string_view>> line = NextLine();
    if (!line.ok()) return line.status();
    if (!*line) {
      return Error(
          fmt::format("the header ends after {} of its 4 lines (heap size, ids, operations, weight)", i));
    }
    absl::StatusOr<uint64_t> v = ParseU64(**line);
    if (!v.ok()) {
      return Error(fmt::format("header line {} ({}) must be a plain number, found '{}'", i + 1,
                               kHeaderNames[i], **line));
    }
    values[i] = *v;
    header_.lines[i] = line_;
  }
  header_.line1 = values[0];
  header_.num_ids = values[1];
  header_.num_ops = values[2];
  header_.line4 = values[3];
  return absl::OkStatus();
}

absl::StatusOr<bool> RepReader::Next(Event& e) {
  e = Event{};
  if (pending_free_) {
    e.kind = EventKind::kFree;
    e.id = *pending_free_;
    pending_free_.reset();
    return true;
  }
  absl::StatusOr<std::optional<std::string_view>> line = NextLine();
  if (!line.ok()) return line.status();
  if (!*line) {
    if (absl::Status s = CheckCountsAtEnd(); !s.ok()) return s;
    return false;
  }
  if (absl::Status s = Operation(**line, e); !s.ok()) return Error(std::string(s.message()));
  return true;
}

absl::Status RepReader::Operation(std::string_view line, Event& e) {
  std::array<std::string_view, 3> f;
  const size_t n = SplitFields(line, f.data(), f.size());
  const bool sized = f[0] == "a" || f[0] == "r";
  if (!sized && f[0] != "f") {
    return absl::InvalidArgumentError(
        fmt::format("unknown operation '{}' (expected 'a id bytes', 'r id bytes' or 'f id')", f[0]));
  }
  const size_t want = sized ? 3 : 2;
  if (n != want) {
    return absl::InvalidArgumentError(
        fmt::format("'{}' takes {} fields ({}), found {}", f[0], want, sized ? "op id bytes" : "op id", n));
  }
  if (ops_ == header_.num_ops) {
    return absl::InvalidArgumentError(
        fmt::format("more operations than the {} that line {} declares", header_.num_ops, header_.lines[2]));
  }
  ++ops_;
  absl::StatusOr<uint64_t> id = Field("id", f[1]);
  if (!id.ok()) return id.status();
  if (*id >= header_.num_ids) {
    return absl::InvalidArgumentError(fmt::format("id {} is not below the {} ids that line {} declares", *id,
                                                  header_.num_ids, header_.lines[1]));
  }
  if (!max_id_ || *id > *max_id_) max_id_ = *id;
  if (sized) {
    absl::StatusOr<uint64_t> bytes = Field("size", f[2]);
    if (!bytes.ok()) return bytes.status();
    return Alloc(*id, *bytes, f[0] == "r", e);
  }
  const auto it = live_.find(*id);
  if (it == live_.end()) return absl::InvalidArgumentError(fmt::format("f of id {}, which is not live", *id));
  e.kind = EventKind::kFree;
  e.id = it->second.buffer;
  live_.erase(it);
  return absl::OkStatus();
}

absl::Status RepReader::Alloc(uint64_t id, uint64_t bytes, bool realloc, Event& e) {
  auto [it, inserted] = live_.try_emplace(id);
  if (realloc && inserted) {
    live_.erase(it);
    return absl::InvalidArgumentError(fmt::format("r of id {}, which is not live", id));
  }
  if (!realloc && !inserted) {
    return absl::InvalidArgumentError(fmt::format("a of id {}, which is still live", id));
  }
  // A realloc moves: the old block stays live until the new one is placed.
  if (realloc) pending_free_ = it->second.buffer;
  it->second = LiveBlock{next_buffer_, bytes};
  tag_ = realloc ? fmt::format("rep:{}:realloc", id) : fmt::format("rep:{}", id);
  e.kind = EventKind::kAlloc;
  e.id = next_buffer_++;
  e.bytes = Bytes(bytes);
  e.tag = tag_;
  return absl::OkStatus();
}

absl::Status RepReader::CheckCountsAtEnd() const {
  if (ops_ < header_.num_ops) {
    return ErrorAt(header_.lines[2], fmt::format("the header declares {} operations, but the file has {}",
                                                 header_.num_ops, ops_));
  }
  if (header_.num_ids == 0 && !max_id_) return absl::OkStatus();
  if (!max_id_ || *max_id_ + 1 != header_.num_ids) {
    return ErrorAt(
        header_.lines[1],
        max_id_ ? fmt::format("the header declares {} ids, but the largest id used is {}", header_.num_ids,
                              *max_id_)
                : fmt::format("the header declares {} ids, but no operation uses one", header_.num_ids));
  }
  return absl::OkStatus();
}

}  // namespace hbmsim::trace::csapp
