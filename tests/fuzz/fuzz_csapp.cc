// libFuzzer target: the CS:APP Malloc Lab .rep reader (trace/csapp), header
// to the end-of-trace checks.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_util.h"
#include "trace/csapp/rep_reader.h"

HBMSIM_FUZZ_ENTRY(csapp, CsappFuzzCorpus) {
  using namespace hbmsim;
  const std::string name = "fuzz.rep";
  absl::StatusOr<std::unique_ptr<csapp::RepReader>> reader =
      csapp::RepReader::FromString(fuzz::AsString(data, size), name);
  if (!reader.ok()) {
    fuzz::CheckErrorMessage(reader.status(), name);
    return 0;
  }
  // A line yields at most two events (a realloc); the reader's errors are final.
  fuzz::DrainReader(**reader, name, fuzz::AfterError::kStop, 2 * size + 2);
  return 0;
}
