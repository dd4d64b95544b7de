// libFuzzer target: the STAlloc mem_log reader (trace/stalloc), first line to
// last. The name carries a device number so the device path is exercised.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_util.h"
#include "trace/stalloc/mem_log_reader.h"

HBMSIM_FUZZ_ENTRY(stalloc, StallocFuzzCorpus) {
  using namespace hbmsim;
  const std::string name = "mem_log_dev3.txt";
  std::unique_ptr<stalloc::MemLogReader> reader =
      stalloc::MemLogReader::FromString(fuzz::AsString(data, size), name);
  // A line yields at most one event; the reader's errors are final.
  fuzz::DrainReader(*reader, name, fuzz::AfterError::kStop, size + 2);
  return 0;
}
