// Storage for the large arrays `size` fills once and reads many times (the
// event log): memory from mmap advised to transparent huge pages.
//
// Why: a fresh 4 KiB page costs a fault on first touch, and on the virtual
// machines CI runs on a fault costs 10+ µs: logging 1 M events (32 MiB) took
// longer in faults than the text parse that produced them. With 2 MiB pages
// the same log takes 16 faults. Where the kernel keeps huge pages to
// madvise() (the common default) this is the only way to get them; where it
// has none, the advice is ignored and nothing else changes.
#ifndef HBMSIM_SIM_ENGINE_HUGE_PAGE_VECTOR_H_
#define HBMSIM_SIM_ENGINE_HUGE_PAGE_VECTOR_H_

#include <cstddef>
#include <new>
#include <vector>

namespace hbmsim::sim {

namespace huge_pages {
inline constexpr size_t kHugePage = size_t{2} << 20;
// At least `bytes` of zeroed memory aligned to kHugePage, or nullptr.
void* Map(size_t bytes);
void Unmap(void* p, size_t bytes);
}  // namespace huge_pages

// A std::allocator that takes arrays of a huge page or more from
// huge_pages::Map; smaller ones from operator new.
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < huge_pages::kHugePage) return std::allocator<T>().allocate(n);
    void* p = huge_pages::Map(bytes);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < huge_pages::kHugePage) return std::allocator<T>().deallocate(p, n);
    huge_pages::Unmap(p, bytes);
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
};

template <typename T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_ENGINE_HUGE_PAGE_VECTOR_H_
