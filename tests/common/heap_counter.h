// Counts calls to the global operator new in any test binary that links
// hbm_heap_counter, so "no heap allocation per event in steady state" is an
// asserted number, not a claim. Tests read the count before and after the
// section they measure and compare the difference with zero.
#ifndef HBMSIM_TESTS_COMMON_HEAP_COUNTER_H_
#define HBMSIM_TESTS_COMMON_HEAP_COUNTER_H_

#include <cstdint>

namespace hbmsim::testing {

// Calls to operator new since the process started, on every thread.
uint64_t HeapAllocationCount();

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_COMMON_HEAP_COUNTER_H_
