// libFuzzer target: the .hbt binary trace reader (trace/binary), plain or
// zstd-compressed (the reader picks by the magic bytes, so seeds of both kinds
// steer the fuzzer into both paths).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_util.h"
#include "trace/binary/binary_reader.h"

HBMSIM_FUZZ_ENTRY(binary, BinaryFuzzCorpus) {
  using namespace hbmsim;
  const std::string name = "fuzz.hbt";
  absl::StatusOr<std::unique_ptr<BinaryTraceReader>> reader =
      BinaryTraceReader::FromString(fuzz::AsString(data, size), name);
  if (!reader.ok()) {
    fuzz::CheckErrorMessage(reader.status(), name);
    return 0;
  }
  // A record takes at least one byte, but zstd can expand the input: the cap
  // is generous and only there to turn a reader that never ends into a finding.
  fuzz::DrainReader(**reader, name, fuzz::AfterError::kStop, uint64_t{1} << 26);
  return 0;
}
