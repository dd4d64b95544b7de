// Small helpers shared by the torch policy tests: requests, an event log and a
// one-line-per-block rendering of the memory map for exact layout asserts.
#ifndef HBMSIM_TESTS_TORCH_TORCH_TEST_UTIL_H_
#define HBMSIM_TESTS_TORCH_TORCH_TEST_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "allocator/torch/torch_allocator.h"
#include "fmt/format.h"

namespace hbmsim::allocator::torch::testing {

inline constexpr uint64_t kKiB = 1 << 10;
inline constexpr uint64_t kMiB = 1 << 20;

inline AllocResult Alloc(TorchAllocator& a, uint64_t bytes, uint64_t stream = 0,
                         std::optional<uint64_t> recorded = std::nullopt) {
  static uint64_t next_id = 1;
  AllocRequest req;
  req.id = BufferId(next_id++);
  req.bytes = Bytes(bytes);
  req.stream = StreamId(stream);
  if (recorded) req.recorded_address = Offset(*recorded);
  return a.Allocate(req);
}

class EventLog : public PolicyObserver {
 public:
  void OnPolicyEvent(const PolicyEvent& e) override {
    lines.push_back(
        fmt::format("{} {} {} {}", PolicyEventKindName(e.kind), e.offset.value(), e.bytes.value(), e.detail));
  }
  std::vector<std::string> lines;
};

// "region <base> <size>" then "  <offset> <size> <state>" per block.
class MapText : public MemoryMapVisitor {
 public:
  void OnRegion(const RegionInfo& r) override {
    text += fmt::format("region {} {}\n", r.base.value(), r.size.value());
  }
  void OnBlock(const BlockInfo& b) override {
    text += fmt::format("  {} {} {}\n", b.offset.value(), b.size.value(), BlockStateName(b.state));
  }
  std::string text;
};

inline std::string Map(const Allocator& a) {
  MapText m;
  a.WalkMemoryMap(m);
  return m.text;
}

// A counter by its memory_stats() key.
inline int64_t Counter(const Allocator& a, std::string_view key) {
  Counters c;
  a.AppendCounters(c);
  for (const auto& [name, value] : c) {
    if (name == key) return value;
  }
  return -999;
}

}  // namespace hbmsim::allocator::torch::testing

#endif  // HBMSIM_TESTS_TORCH_TORCH_TEST_UTIL_H_
