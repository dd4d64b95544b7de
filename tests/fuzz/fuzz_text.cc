// libFuzzer target: the text trace reader (trace/text), header to last line,
// skipping rejected lines as `--lenient` does. A small line cap makes the
// "line too long" path reachable with small inputs.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_util.h"
#include "trace/text/text_reader.h"

namespace {

constexpr size_t kFuzzLineCap = 4096;

}  // namespace

HBMSIM_FUZZ_ENTRY(text, TextFuzzCorpus) {
  using namespace hbmsim;
  const std::string name = "fuzz.trace";
  absl::StatusOr<std::unique_ptr<TextTraceReader>> reader =
      TextTraceReader::FromSource(StringSource(fuzz::AsString(data, size)), name, kFuzzLineCap);
  if (!reader.ok()) {
    fuzz::CheckErrorMessage(reader.status(), name);
    return 0;
  }
  // Every call consumes at least one line, so a line per input byte (+ the end) bounds it.
  fuzz::DrainReader(**reader, name, fuzz::AfterError::kContinue, size + 2);
  return 0;
}
