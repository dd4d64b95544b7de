// libFuzzer target: the RAPIDS RMM logging_resource_adaptor CSV reader
// (trace/rmm), header to last row.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_util.h"
#include "trace/rmm/rmm_reader.h"

HBMSIM_FUZZ_ENTRY(rmm, RmmFuzzCorpus) {
  using namespace hbmsim;
  const std::string name = "fuzz.csv";
  std::unique_ptr<rmm::RmmLogReader> reader = rmm::RmmLogReader::FromString(fuzz::AsString(data, size), name);
  // A row is at least one line; the RMM reader's errors are final.
  fuzz::DrainReader(*reader, name, fuzz::AfterError::kStop, size + 2);
  return 0;
}
