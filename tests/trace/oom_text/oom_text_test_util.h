// A block's figures in one line, for exact comparisons: `name=bytes±precision`
// for a seen figure, `name~bytes±precision` for a derived one, percentages
// with their unit, texts (a memory space) as printed.
#ifndef HBMSIM_TESTS_OOM_TEXT_OOM_TEXT_TEST_UTIL_H_
#define HBMSIM_TESTS_OOM_TEXT_OOM_TEXT_TEST_UTIL_H_

#include <cmath>
#include <string>

#include "fmt/format.h"
#include "trace/oom_text/oom_text.h"

namespace hbmsim::trace::oom_text {

inline std::string FigureLine(const OomText& t) {
  std::string out;
  for (const Figure& f : t.figures) {
    if (!out.empty()) out += ' ';
    const char* sign = f.derived ? "~" : "=";
    if (f.unit == "B") {
      out += fmt::format("{}{}{}", f.name, sign, std::llround(f.value));
      if (f.precision > 0) out += fmt::format("±{}", std::llround(f.precision));
    } else if (f.unit.empty()) {
      out += fmt::format("{}{}{}", f.name, sign, f.value == 0 ? f.text : fmt::format("{:g}", f.value));
    } else {
      out += fmt::format("{}{}{:g}{}", f.name, sign, f.value, f.unit);
    }
  }
  return out;
}

}  // namespace hbmsim::trace::oom_text

#endif  // HBMSIM_TESTS_OOM_TEXT_OOM_TEXT_TEST_UTIL_H_
