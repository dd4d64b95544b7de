// Small pools with hand-countable numbers: 1 KiB granules, 256-byte
// alignment, 4 KiB VA ranges, so every placement below is worked out by hand
// in the test's comment.
#ifndef HBMSIM_TESTS_CUDA_ASYNC_CUDA_ASYNC_TEST_UTIL_H_
#define HBMSIM_TESTS_CUDA_ASYNC_CUDA_ASYNC_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "allocator/cuda_async/cuda_async_allocator.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"

namespace hbmsim::testing {

inline CudaAsyncOptions SmallPool(uint64_t limit) {
  CudaAsyncOptions o;
  o.memory_limit = Bytes(limit);
  o.granule = 1024;
  o.alignment = 256;
  o.va_range = 4096;
  return o;
}

// The random programs' pools (property and window tests): 2 MiB granules,
// 64 MiB VA ranges, and the seed picks the release threshold, opportunistic
// reuse and internal dependencies.
inline CudaAsyncOptions SeededPool(uint64_t limit, uint64_t seed) {
  CudaAsyncOptions o;
  o.memory_limit = Bytes(limit);
  o.va_range = uint64_t{64} << 20;
  o.release_threshold = seed % 3 == 0 ? 0 : seed % 3 == 1 ? uint64_t{96} << 20 : ~uint64_t{0};
  o.opportunistic = seed % 2 == 0;
  o.internal_dependencies = seed % 4 != 1;
  return o;
}

// Allocates and checks the invariants; returns the result.
inline AllocResult Alloc(CudaAsyncAllocator& a, uint64_t id, uint64_t bytes, uint64_t stream = 0) {
  AllocRequest req;
  req.id = BufferId(id);
  req.bytes = Bytes(bytes);
  req.stream = StreamId(stream);
  const AllocResult r = a.Allocate(req);
  const absl::Status s = a.CheckInvariants();
  EXPECT_TRUE(s.ok()) << s.message();
  return r;
}

// The memory map as "offset:size:state" items, one range per "|".
class MapText : public MemoryMapVisitor {
 public:
  void OnRegion(const RegionInfo& r) override {
    if (!text.empty()) text += " | ";
    first = true;
  }
  void OnBlock(const BlockInfo& b) override {
    text += fmt::format("{}{}:{}:{}", first ? "" : " ", b.offset.value(), b.size.value(),
                        BlockStateName(b.state));
    first = false;
  }
  std::string text;
  bool first = true;
};

inline std::string Map(const CudaAsyncAllocator& a) {
  MapText m;
  a.WalkMemoryMap(m);
  return m.text;
}

inline int64_t CounterValue(const CudaAsyncAllocator& a, const std::string& name) {
  Counters c;
  a.AppendCounters(c);
  for (const Counter& x : c) {
    if (x.name == name) return x.value;
  }
  ADD_FAILURE() << "no counter " << name;
  return -1;
}

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_CUDA_ASYNC_CUDA_ASYNC_TEST_UTIL_H_
