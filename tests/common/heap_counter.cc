#include "tests/common/heap_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

#include "sim/all_layers.h"

namespace {
std::atomic<uint64_t> g_heap_allocations{0};
}  // namespace

// Replacing the global operator new for the whole binary is the only way to see
// allocations made deep inside std and absl containers. Referencing
// HeapAllocationCount() is what pulls this object (and so the replacement) out
// of the static library.
// GCC cannot see that the replacements pair malloc with free.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  g_heap_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace hbmsim::testing {

uint64_t HeapAllocationCount() { return g_heap_allocations.load(std::memory_order_relaxed); }

}  // namespace hbmsim::testing
