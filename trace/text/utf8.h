// UTF-8 validation for the free-text fields of a trace (tags, mark labels,
// metadata), so that reports and JSON output never carry broken text.
#ifndef HBMSIM_TRACE_TEXT_UTF8_H_
#define HBMSIM_TRACE_TEXT_UTF8_H_

#include <string>
#include <string_view>

namespace hbmsim::trace {

// True when `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF).
bool IsValidUtf8(std::string_view text);

// `text` with each byte that does not start a well-formed sequence written as
// U+FFFD, so a pickle output always loads in Python (JSON outputs get the
// same treatment from nlohmann's replace handler, trace/core/json_text.h).
std::string ReplaceInvalidUtf8(std::string_view text);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TEXT_UTF8_H_
