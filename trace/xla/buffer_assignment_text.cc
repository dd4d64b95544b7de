#include "trace/xla/buffer_assignment_text.h"

#include "absl/container/flat_hash_map.h"
#include "fmt/format.h"
#include "trace/xla/text_lines.h"

namespace hbmsim::trace::xla {
namespace {

constexpr std::string_view kTitle = "BufferAssignment:";
constexpr std::string_view kLiveRangeTitle = "HloLiveRange (max ";

absl::Status Bad(std::string_view expected, std::string_view got) {
  return absl::InvalidArgumentError(fmt::format("expected {}, got \"{}\"", expected, got));
}

// "allocation 1: size 2048, preallocated-temp:" (already stripped).
absl::StatusOr<Allocation> ParseAllocationHeader(std::string_view line) {
  constexpr std::string_view kShape = "\"allocation <index>: size <bytes>[, <flags>]:\"";
  std::string_view s = line;
  Allocation a;
  std::optional<uint64_t> index, size;
  if (!Consume(s, "allocation ") || !(index = ConsumeDecimal(s)) || !Consume(s, ": size ") ||
      !(size = ConsumeDecimal(s))) {
    return Bad(kShape, line);
  }
  if (!s.empty() && s.back() == ':') s.remove_suffix(1);
  if (!s.empty() && !Consume(s, ", ")) return Bad(kShape, line);
  a.index = *index;
  a.size = Bytes(*size);
  a.flags = std::string(StripBlanks(s));
  return a;
}

// "<7 tuple.2{1} (phi) @0>" -> id and name; `s` is left after the '>'.
absl::Status ParseValueRef(std::string_view& s, AssignedValue& v) {
  std::optional<uint64_t> id;
  if (!Consume(s, "<") || !(id = ConsumeDecimal(s)) || !Consume(s, " "))
    return absl::InvalidArgumentError("");
  const size_t close = s.find('>');
  if (close == std::string_view::npos) return absl::InvalidArgumentError("");
  std::string_view inside = s.substr(0, close);
  s.remove_prefix(close + 1);
  const size_t blank = inside.find(' ');
  std::string_view name = inside.substr(0, blank);
  std::string_view tail = blank == std::string_view::npos ? std::string_view() : inside.substr(blank);
  Consume(tail, " (phi)");
  if (Consume(tail, " @") && !ConsumeDecimal(tail)) return absl::InvalidArgumentError("");
  if (name.empty() || !tail.empty()) return absl::InvalidArgumentError("");
  v.id = *id;
  v.name = std::string(name);
  return absl::OkStatus();
}

// "value: <3 add.1 @0> (size=1024,offset=0): f32[256]{0}" (already stripped).
absl::StatusOr<AssignedValue> ParseValueLine(std::string_view line) {
  constexpr std::string_view kShape = "\"value: <id name[ @color]> (size=<bytes>,offset=<bytes>): <shape>\"";
  std::string_view s = line;
  AssignedValue v;
  std::optional<uint64_t> size, offset;
  if (!Consume(s, "value: ") || !ParseValueRef(s, v).ok() || !Consume(s, " (size=") ||
      !(size = ConsumeDecimal(s)) || !Consume(s, ",offset=") || !(offset = ConsumeDecimal(s)) ||
      !Consume(s, ")")) {
    return Bad(kShape, line);
  }
  v.size = Bytes(*size);
  v.offset = *offset;
  v.tuple_shaped = s.starts_with(": (");
  return v;
}

absl::Status CheckFits(const Allocation& a, const AssignedValue& v) {
  if (v.size <= a.size && v.offset <= a.size.value() - v.size.value()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      fmt::format("{} at offset {} with size {} does not fit allocation {} of size {}", v.name, v.offset,
                  v.size.value(), a.index, a.size.value()));
}

}  // namespace

bool LooksLikeBufferAssignmentText(std::string_view head) { return head.starts_with(kTitle); }
bool LooksLikeLiveRangeText(std::string_view head) { return head.starts_with(kLiveRangeTitle); }

absl::StatusOr<BufferAssignmentText> ParseBufferAssignmentText(std::string_view text,
                                                               std::string_view source) {
  LineCursor lines(text);
  std::optional<std::string_view> line = lines.Next();
  if (!line || StripBlanks(*line) != kTitle) {
    return LineError(source, 1, fmt::format("expected \"{}\" as the first line", kTitle));
  }
  BufferAssignmentText out;
  absl::flat_hash_map<uint64_t, int> allocation_lines, value_lines;  // for duplicates, never iterated
  bool in_allocations = true;  // until "Used values:" / "Total bytes used:"
  while (true) {
    const std::string_view before = lines.rest();
    if (!(line = lines.Next())) break;
    const std::string_view s = StripBlanks(*line);
    if (s.starts_with(kLiveRangeTitle)) {
      out.live_range_text = before;
      out.live_range_first_line = lines.line();
      break;
    }
    if (s.starts_with("Total bytes used:") || s == "Used values:") in_allocations = false;
    if (!in_allocations) continue;
    if (s.starts_with("allocation ")) {
      absl::StatusOr<Allocation> a = ParseAllocationHeader(s);
      if (!a.ok()) return LineError(source, lines.line(), std::string(a.status().message()));
      a->line = lines.line();
      if (auto [it, fresh] = allocation_lines.emplace(a->index, a->line); !fresh) {
        return LineError(source, lines.line(),
                         fmt::format("allocation {} listed twice (first at line {})", a->index, it->second));
      }
      out.allocations.push_back(std::move(*a));
    } else if (s.starts_with("value:")) {
      absl::StatusOr<AssignedValue> v = ParseValueLine(s);
      if (!v.ok()) return LineError(source, lines.line(), std::string(v.status().message()));
      if (out.allocations.empty())
        return LineError(source, lines.line(), "a value line before any allocation");
      if (absl::Status fits = CheckFits(out.allocations.back(), *v); !fits.ok()) {
        return LineError(source, lines.line(), std::string(fits.message()));
      }
      v->line = lines.line();
      if (auto [it, fresh] = value_lines.emplace(v->id, v->line); !fresh) {
        return LineError(source, lines.line(),
                         fmt::format("value {} assigned twice (first at line {})", v->id, it->second));
      }
      out.allocations.back().values.push_back(std::move(*v));
    }
    // Any other line (a stats block, a blank) is not part of the assignment.
  }
  return out;
}

}  // namespace hbmsim::trace::xla
