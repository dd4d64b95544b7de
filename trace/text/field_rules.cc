#include "trace/text/field_rules.h"

#include <algorithm>
#include <string>

#include "fmt/format.h"
#include "trace/text/utf8.h"

namespace hbmsim::trace {
namespace {

absl::Status FieldError(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

}  // namespace

bool HasBlankOrBreak(std::string_view s) {
  return s.find_first_of(std::string_view(" \t\r\n\0", 5)) != std::string_view::npos;
}

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

absl::Status CheckAttributePlaces(const Event& e) {
  const std::string_view kind = EventKindName(e.kind);
  if (e.stream.value() != 0 && !IsBufferEvent(e.kind)) {
    return FieldError(fmt::format("stream= on {}: a trace holds it only on alloc and free*", kind));
  }
  if (!e.tag.empty() && !HasBytesField(e.kind)) {
    return FieldError(fmt::format("tag= on {}: a trace holds it only on alloc and program_load", kind));
  }
  if ((e.shape.has_value() || e.addr.has_value()) && e.kind != EventKind::kAlloc) {
    return FieldError(fmt::format("shape= or addr= on {}: a trace holds them only on alloc", kind));
  }
  return absl::OkStatus();
}

absl::Status CheckTextField(std::string_view what, std::string_view text) {
  if (HasBlankOrBreak(text)) {
    return FieldError(
        fmt::format("{} '{}' holds a blank, line break or NUL, which a trace cannot hold", what, text));
  }
  if (!IsValidUtf8(text)) return FieldError(fmt::format("{} is not valid UTF-8, which a trace cannot hold", what));
  return absl::OkStatus();
}

absl::Status CheckOtherAttributes(std::string_view attrs) {
  if (attrs.empty()) return absl::OkStatus();
  if (!IsValidUtf8(attrs)) return FieldError("attributes are not valid UTF-8, which a trace cannot hold");
  size_t start = 0;
  while (start <= attrs.size()) {
    const size_t space = std::min(attrs.find(' ', start), attrs.size());
    const std::string_view field = attrs.substr(start, space - start);
    const size_t eq = field.find('=');
    if (eq == 0 || eq == std::string_view::npos || HasBlankOrBreak(field)) {
      return FieldError(
          fmt::format("attribute '{}' is not key=value without blanks, which a trace cannot hold", field));
    }
    start = space + 1;
  }
  return absl::OkStatus();
}

absl::Status CheckMetadataEntry(std::string_view key, std::string_view value) {
  if (key.empty() || HasBlankOrBreak(key) || key.find(':') != std::string_view::npos) {
    return FieldError(fmt::format(
        "metadata key '{}' is empty or holds a blank or ':', which a trace's header cannot hold", key));
  }
  if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos) {
    return FieldError(
        fmt::format("metadata '{}' holds a line break or NUL, which a trace's header cannot hold", key));
  }
  if (!IsValidUtf8(key) || !IsValidUtf8(value))
    return FieldError(fmt::format("metadata '{}' is not valid UTF-8, which a trace's header cannot hold",
                             ReplaceInvalidUtf8(key)));
  return absl::OkStatus();
}

}  // namespace hbmsim::trace
