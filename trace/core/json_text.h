// The one way hbmsim turns a JSON value into the bytes of an output. Text in
// a report often comes from the user's input (tags, labels, frame names,
// allocator names, file names), and an input may hold bytes that are not
// UTF-8. nlohmann::json's default dump() throws on such a string, which the
// CLI can only report as an internal error (exit 3) on what is bad input;
// here every invalid byte is written as U+FFFD instead (docs/cli.md, "Text
// from an input that is not UTF-8"), so a JSON output is always valid JSON.
#ifndef HBMSIM_TRACE_CORE_JSON_TEXT_H_
#define HBMSIM_TRACE_CORE_JSON_TEXT_H_

#include <string>

#include "nlohmann/json.hpp"

namespace hbmsim::trace {

// `value` as JSON text; `indent` < 0 is one line, as dump() takes it.
template <class Json>
std::string JsonText(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_CORE_JSON_TEXT_H_
