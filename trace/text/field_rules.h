// What a trace can carry, in one place. The text writer, the binary writer and
// the binary reader all apply these rules, so text → binary → text stays
// lossless and every writer refuses the same events with the same words.
#ifndef HBMSIM_TRACE_TEXT_FIELD_RULES_H_
#define HBMSIM_TRACE_TEXT_FIELD_RULES_H_

#include <string_view>

#include "absl/status/status.h"
#include "trace/core/event.h"

namespace hbmsim::trace {

// A blank, tab, line break or NUL would split or end a text field.
bool HasBlankOrBreak(std::string_view s);

// Blanks and tabs at both ends removed (how a reader sees a metadata value).
std::string_view TrimBlanks(std::string_view s);

// True for the kinds whose line carries a <bytes> field.
inline bool HasBytesField(EventKind k) { return k == EventKind::kAlloc || k == EventKind::kProgramLoad; }

// An attribute the format has no place for on this kind of event
// (stream= on alloc and free*, tag= on alloc and program_load, shape=/addr= on alloc).
absl::Status CheckAttributePlaces(const Event& e);

// A tag or mark label must survive field splitting unchanged and be UTF-8.
// `what` names it in the message ("tag", "mark label").
absl::Status CheckTextField(std::string_view what, std::string_view text);

// An Event's other attributes (Event::attrs): `key=value` fields with a
// non-empty key, joined by single spaces, no line break or NUL, UTF-8.
absl::Status CheckOtherAttributes(std::string_view attrs);

// A `# key: value` metadata entry: a non-empty key without blanks or ':', a
// value without line breaks or NUL, both UTF-8.
absl::Status CheckMetadataEntry(std::string_view key, std::string_view value);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TEXT_FIELD_RULES_H_
