// Small helpers shared by the tpu tests: one-line allocations and counter lookup.
#ifndef HBMSIM_TESTS_TPU_TPU_TEST_UTIL_H_
#define HBMSIM_TESTS_TPU_TPU_TEST_UTIL_H_

#include <map>
#include <string_view>

#include "allocator/tpu/tpu_allocator.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"

namespace hbmsim::testing {

inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kKiB = uint64_t{1} << 10;

inline TpuOptions Options(uint64_t hbm_bytes) {
  TpuOptions o;
  o.hbm_bytes = Bytes(hbm_bytes);
  return o;
}

inline AllocResult Alloc(TpuAllocator& a, uint64_t id, uint64_t bytes, const TensorShape* shape = nullptr) {
  AllocRequest req;
  req.id = BufferId(id);
  req.bytes = Bytes(bytes);
  req.shape = shape;
  req.event = EventIndex(id);
  return a.Allocate(req);
}

inline int64_t CounterValue(const TpuAllocator& a, std::string_view name) {
  Counters counters;
  a.AppendCounters(counters);
  for (const Counter& c : counters) {
    if (c.name == name) return c.value;
  }
  ADD_FAILURE() << "no counter " << name;
  return -1;
}

// Address of every live buffer, keyed by buffer id.
inline std::map<uint64_t, uint64_t> AddressesById(const TpuAllocator& a) {
  std::map<uint64_t, uint64_t> out;
  for (const TpuBufferInfo& b : a.LiveBuffers()) out[b.id.value()] = b.offset.value();
  return out;
}

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_TPU_TPU_TEST_UTIL_H_
