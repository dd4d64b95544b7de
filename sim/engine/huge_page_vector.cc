#include "sim/engine/huge_page_vector.h"

#include <sys/mman.h>

#include <cstdint>

namespace hbmsim::sim::huge_pages {
namespace {

size_t RoundUp(size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

}  // namespace

void* Map(size_t bytes) {
  const size_t size = RoundUp(bytes);
  // One huge page more than needed, so an aligned run fits; the ends go back.
  // MAP_NORESERVE: a log reserves room for its most events and may use a
  // fraction; only what is touched should count against the commit limit.
  void* raw =
      mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t tail = start + size + kHugePage - (aligned + size);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + size), tail);
  void* p = reinterpret_cast<void*>(aligned);
  madvise(p, size, MADV_HUGEPAGE);  // advice: without huge pages it is the plain mapping
  return p;
}

void Unmap(void* p, size_t bytes) { munmap(p, RoundUp(bytes)); }

}  // namespace hbmsim::sim::huge_pages
