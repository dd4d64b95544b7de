// The libFuzzer program of one fuzz target: its LLVMFuzzerTestOneInput is the
// target's entry (fuzz_util.h), named when this file is compiled for it
// (HBMSIM_FUZZ_ENTRY_SYMBOL, tests/fuzz/CMakeLists.txt).
#include <cstddef>
#include <cstdint>

extern "C" int HBMSIM_FUZZ_ENTRY_SYMBOL(const uint8_t* data, size_t size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return HBMSIM_FUZZ_ENTRY_SYMBOL(data, size);
}
