// libFuzzer target: a pasted log read for the OOM texts of JAX, XLA and the
// TPU runtime (trace/oom_text), then rendered as text and JSON. Never an
// error: every block gets a verdict of the known set; each figure a name;
// the JSON serialises (no NaN or invalid UTF-8 makes it throw).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "tests/fuzz/fuzz_util.h"
#include "trace/oom_text/oom_text.h"
#include "trace/oom_text/render.h"

HBMSIM_FUZZ_ENTRY(oom_text, OomTextFuzzCorpus) {
  using namespace hbmsim;
  const std::set<std::string> verdicts = {"oom", "fragmentation", "program does not fit", "undetermined",
                                          "no failure shown"};
  const std::vector<oom_text::OomText> texts = oom_text::ReadOomTexts(fuzz::AsString(data, size));
  for (const oom_text::OomText& t : texts) {
    if (!verdicts.contains(t.verdict)) fuzz::Fail("verdict '" + t.verdict + "' of kind " + t.kind);
    if (t.line == 0) fuzz::Fail("a block at line 0");
    for (const oom_text::Figure& f : t.figures) {
      if (f.name.empty()) fuzz::Fail("a figure without a name");
    }
  }
  (void)oom_text::RenderOomTextsText("fuzz.log", texts);
  (void)oom_text::RenderOomTextsJson(texts).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
