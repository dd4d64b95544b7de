// `hbmsim diagnose`'s report of the OOM texts (oom_text.h): per block the
// verdict, every figure (seen as printed with its precision, or derived and
// how), what would fit, the program allocations as a table, what the text
// does not show. Text and JSON.
#ifndef HBMSIM_TRACE_OOM_TEXT_RENDER_H_
#define HBMSIM_TRACE_OOM_TEXT_RENDER_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "trace/oom_text/oom_text.h"

namespace hbmsim::trace::oom_text {

std::string RenderOomTextsText(const std::string& source, const std::vector<OomText>& texts);
nlohmann::json RenderOomTextsJson(const std::vector<OomText>& texts);

}  // namespace hbmsim::trace::oom_text

#endif  // HBMSIM_TRACE_OOM_TEXT_RENDER_H_
