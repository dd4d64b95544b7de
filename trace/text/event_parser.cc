#include "trace/text/event_parser.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "fmt/format.h"
#include "trace/core/numbers.h"
#include "trace/text/common_line.h"
#include "trace/text/utf8.h"

namespace hbmsim::trace {
namespace {

enum Attr : uint8_t { kTime, kStream, kTag, kShape, kAddr, kDevice, kAttrCount };

constexpr uint8_t Bit(Attr a) { return static_cast<uint8_t>(1u << a); }
constexpr uint8_t kAnyEvent = Bit(kTime) | Bit(kDevice);
constexpr uint8_t kOnFree = kAnyEvent | Bit(kStream);
constexpr uint8_t kOnAlloc = kOnFree | Bit(kTag) | Bit(kShape) | Bit(kAddr);
constexpr uint8_t kOnProgramLoad = kAnyEvent | Bit(kTag);

struct AttrInfo {
  std::string_view key;
  std::string_view allowed_on;  // for the "not allowed" message
};

constexpr std::array<AttrInfo, kAttrCount> kAttrs = {{
    {"t", "any event"},
    {"stream", "alloc, free, free_requested and free_completed"},
    {"tag", "alloc and program_load"},
    {"shape", "alloc"},
    {"addr", "alloc"},
    {"device", "any event"},
}};

struct Syntax {
  std::string_view keyword;
  EventKind kind;
  std::string_view usage;
  std::string_view id_name;  // "<id>", "<pid>"; empty for mark
  bool has_bytes;
  uint8_t allowed;
};

constexpr std::array<Syntax, 10> kSyntax = {{
    {"alloc", EventKind::kAlloc, "alloc <id> <bytes> [attrs]", "<id>", true, kOnAlloc},
    {"free", EventKind::kFree, "free <id> [attrs]", "<id>", false, kOnFree},
    {"a", EventKind::kAlloc, "alloc <id> <bytes> [attrs]", "<id>", true, kOnAlloc},
    {"f", EventKind::kFree, "free <id> [attrs]", "<id>", false, kOnFree},
    {"free_requested", EventKind::kFreeRequested, "free_requested <id> [attrs]", "<id>", false, kOnFree},
    {"free_completed", EventKind::kFreeCompleted, "free_completed <id> [attrs]", "<id>", false, kOnFree},
    {"program_load", EventKind::kProgramLoad, "program_load <pid> <bytes> [attrs]", "<pid>", true,
     kOnProgramLoad},
    {"program_run", EventKind::kProgramRun, "program_run <pid> [attrs]", "<pid>", false, kAnyEvent},
    {"program_unload", EventKind::kProgramUnload, "program_unload <pid> [attrs]", "<pid>", false, kAnyEvent},
    {"mark", EventKind::kMark, "mark <label> [attrs]", "", false, kAnyEvent},
}};

absl::Status LineError(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

std::string Why(const absl::Status& s) { return std::string(s.message()); }

// A field as quoted in a message: hostile lines may hold fields of a
// megabyte, which would drown the message.
std::string Quoted(std::string_view field) {
  constexpr size_t kMaxShown = 64;
  if (field.size() <= kMaxShown) return fmt::format("'{}'", field);
  return fmt::format("'{}...' ({} bytes)", field.substr(0, kMaxShown), field.size());
}

// Keyword and attribute names are compared by size and first byte before
// memcmp: most candidates fail there, and this loop runs for every field.
bool SameName(std::string_view name, std::string_view field) {
  return name.size() == field.size() && name[0] == field[0] && name == field;
}

const Syntax* FindSyntax(std::string_view keyword) {
  if (keyword.empty()) return nullptr;
  for (const Syntax& s : kSyntax) {
    if (SameName(s.keyword, keyword)) return &s;
  }
  return nullptr;
}

// The hot path of every number: plain decimal digits, at most 19 of them (so
// no overflow is possible). Anything else returns false and goes to
// numbers.h, which says exactly what was wrong.
bool ParsePlainDecimal(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (const char c : s) {
    const unsigned digit = static_cast<unsigned char>(c) - unsigned{'0'};
    if (digit > 9) return false;
    v = v * 10 + digit;
  }
  out = v;
  return true;
}

absl::StatusOr<uint64_t> ParseId(std::string_view field) {
  uint64_t v = 0;
  if (ParsePlainDecimal(field, v)) return v;
  return ParseU64(field);
}

// A <bytes> field. Plain decimals go to ParseU64, whose overflow message
// ("'X' does not fit in 64 bits") is clearer than ParseBytes' wrapping of it.
absl::StatusOr<Bytes> ParseSize(std::string_view field) {
  uint64_t v = 0;
  if (ParsePlainDecimal(field, v)) return Bytes(v);
  if (field.find_first_not_of("0123456789") != std::string_view::npos) return ParseBytes(field);
  absl::StatusOr<uint64_t> n = ParseU64(field);
  if (!n.ok()) return n.status();
  return Bytes(*n);
}

// The next positional field, which must be present and must not be an
// attribute (ids and sizes never contain '=').
absl::Status TakePositional(std::string_view& rest, const Syntax& syntax, std::string_view name,
                            std::string_view& field) {
  field = NextField(rest);
  if (field.empty() || field.find('=') != std::string_view::npos) {
    return LineError(fmt::format("missing {} in '{}'", name, syntax.usage));
  }
  return absl::OkStatus();
}

absl::Status ParsePositionals(std::string_view& rest, const Syntax& syntax, Event& e) {
  std::string_view field;
  if (syntax.kind == EventKind::kMark) {
    // The label is one field and may itself hold '=' (`mark step=3`).
    e.label = NextField(rest);
    if (e.label.empty()) return LineError(fmt::format("missing <label> in '{}'", syntax.usage));
    if (!IsValidUtf8(e.label)) return LineError("mark label is not valid UTF-8");
    return absl::OkStatus();
  }
  if (absl::Status s = TakePositional(rest, syntax, syntax.id_name, field); !s.ok()) return s;
  absl::StatusOr<uint64_t> id = ParseId(field);
  if (!id.ok()) return LineError(fmt::format("bad {}: {}", syntax.id_name, Why(id.status())));
  e.id = *id;
  if (!syntax.has_bytes) return absl::OkStatus();
  if (absl::Status s = TakePositional(rest, syntax, "<bytes>", field); !s.ok()) return s;
  absl::StatusOr<Bytes> bytes = ParseSize(field);
  if (!bytes.ok()) return LineError(fmt::format("bad <bytes>: {}", Why(bytes.status())));
  e.bytes = *bytes;
  return absl::OkStatus();
}

absl::Status ParseNumberAttr(std::string_view key, std::string_view value, uint64_t& out) {
  absl::StatusOr<uint64_t> n = key == "addr" ? ParseAddress(value) : ParseId(value);
  if (!n.ok()) return LineError(fmt::format("bad {}=: {}", key, Why(n.status())));
  out = *n;
  return absl::OkStatus();
}

absl::Status SetAttribute(Attr attr, std::string_view value, Event& e) {
  const std::string_view key = kAttrs[attr].key;
  uint64_t n = 0;
  switch (attr) {
    case kTag:
      if (!IsValidUtf8(value)) return LineError("tag= is not valid UTF-8");
      e.tag = value;
      return absl::OkStatus();
    case kShape: {
      absl::StatusOr<TensorShape> shape = ParseShape(value);
      if (!shape.ok()) return LineError(fmt::format("bad shape=: {}", Why(shape.status())));
      e.shape = std::move(*shape);
      return absl::OkStatus();
    }
    default:
      break;
  }
  if (absl::Status s = ParseNumberAttr(key, value, n); !s.ok()) return s;
  if (attr == kTime) e.time_us = n;
  if (attr == kStream) e.stream = StreamId(n);
  if (attr == kAddr) e.addr = n;
  if (attr == kDevice) e.device = DeviceId(n);
  return absl::OkStatus();
}

// An attribute the format does not define: kept, in line order, in `other`.
absl::Status KeepOtherAttribute(std::string_view field, size_t eq, std::string& other) {
  if (eq == 0) return LineError(fmt::format("attribute {} has no name before '='", Quoted(field)));
  if (!IsValidUtf8(field))
    return LineError(fmt::format("attribute {} is not valid UTF-8", Quoted(field.substr(0, eq))));
  if (!other.empty()) other.push_back(' ');
  other.append(field);
  return absl::OkStatus();
}

absl::Status ParseAttribute(std::string_view field, const Syntax& syntax, uint8_t& seen, Event& e,
                            std::string& other) {
  const size_t eq = field.find('=');
  if (eq == std::string_view::npos) {
    return LineError(fmt::format("unexpected extra field {} in '{}'", Quoted(field), syntax.usage));
  }
  const std::string_view key = field.substr(0, eq);
  const std::string_view value = field.substr(eq + 1);
  int attr = 0;
  while (attr < kAttrCount && (key.empty() || !SameName(kAttrs[attr].key, key))) ++attr;
  if (attr == kAttrCount) return KeepOtherAttribute(field, eq, other);
  const Attr a = static_cast<Attr>(attr);
  if ((syntax.allowed & Bit(a)) == 0) {
    return LineError(fmt::format("attribute {}= is not allowed on {} (only on {})", key,
                             EventKindName(syntax.kind), kAttrs[a].allowed_on));
  }
  if ((seen & Bit(a)) != 0) return LineError(fmt::format("duplicate attribute {}=", key));
  seen |= Bit(a);
  if (value.empty()) return LineError(fmt::format("empty value for {}=", key));
  return SetAttribute(a, value, e);
}

}  // namespace

bool LooksLikeTensorFlowLog(std::string_view line) {
  for (const std::string_view mark : {"bfc_allocator", "tensorflow/", "xla/tsl/", "allocation summary follows",
                                      "ran out of memory trying to allocate"}) {
    if (line.find(mark) != std::string_view::npos) return true;
  }
  return false;
}

absl::Status ParseEventLine(std::string_view line, Event& e, std::string& other_attrs) {
  if (ParseCommonLine(line, e)) return absl::OkStatus();
  std::string_view rest = line;
  const std::string_view keyword = NextField(rest);
  const Syntax* syntax = FindSyntax(keyword);
  if (syntax == nullptr && LooksLikeTensorFlowLog(line)) {
    return LineError(fmt::format("unknown event {}: a line of a TensorFlow log, not an event; `hbmsim diagnose` reads "
                             "the out-of-memory dump of a BFC allocator's log",
                             Quoted(keyword)));
  }
  if (syntax == nullptr) {
    return LineError(
        fmt::format("unknown event {} (expected alloc, free, free_requested, free_completed, program_load, "
                    "program_run, program_unload or mark)",
                    Quoted(keyword)));
  }
  e = Event{};
  e.kind = syntax->kind;
  if (absl::Status s = ParsePositionals(rest, *syntax, e); !s.ok()) return s;
  uint8_t seen = 0;
  other_attrs.clear();
  for (std::string_view field = NextField(rest); !field.empty(); field = NextField(rest)) {
    if (absl::Status s = ParseAttribute(field, *syntax, seen, e, other_attrs); !s.ok()) return s;
  }
  e.attrs = other_attrs;
  return absl::OkStatus();
}

}  // namespace hbmsim::trace
