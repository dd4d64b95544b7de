// Helpers shared by the BFC tests: terse allocation calls and a one-line
// rendering of the memory map that tests compare as a string.
#ifndef HBMSIM_TESTS_BFC_BFC_TEST_UTIL_H_
#define HBMSIM_TESTS_BFC_BFC_TEST_UTIL_H_

#include <string>
#include <vector>

#include "allocator/bfc/bfc_allocator.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"

namespace hbmsim::testing {

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * 1024;

inline BfcOptions Limit(uint64_t bytes) {
  BfcOptions o;
  o.memory_limit = Bytes(bytes);
  return o;
}

inline AllocResult Alloc(BfcAllocator& a, uint64_t id, uint64_t bytes, uint64_t stream = 0) {
  AllocRequest req;
  req.id = BufferId(id);
  req.bytes = Bytes(bytes);
  req.stream = StreamId(stream);
  return a.Allocate(req);
}

// "[base+size] U0+256 h0>1, F256+768 h1>-": per region its base and size, then
// each chunk as U(in use)/F(free), offset+size, handle>next ('-' = none).
class MapRenderer : public MemoryMapVisitor {
 public:
  void OnRegion(const RegionInfo& r) override {
    if (!text.empty()) text += " | ";
    text += fmt::format("[{}+{}]", r.base.value(), r.size.value());
    first_block_ = true;
  }
  void OnBlock(const BlockInfo& b) override {
    text += first_block_ ? " " : ", ";
    first_block_ = false;
    const std::string next = b.next_handle == kNoHandle ? "-" : fmt::format("{}", b.next_handle);
    text += fmt::format("{}{}+{} h{}>{}", b.state == BlockState::kInUse ? 'U' : 'F', b.offset.value(),
                        b.size.value(), b.handle, next);
    blocks.push_back(b);
  }
  std::string text;
  std::vector<BlockInfo> blocks;

 private:
  bool first_block_ = false;
};

inline std::string Map(const BfcAllocator& a) {
  MapRenderer r;
  a.WalkMemoryMap(r);
  return r.text;
}

inline std::vector<BlockInfo> Blocks(const BfcAllocator& a) {
  MapRenderer r;
  a.WalkMemoryMap(r);
  return r.blocks;
}

// "region_added 2097152@0" per policy event, in order.
class EventLog : public PolicyObserver {
 public:
  void OnPolicyEvent(const PolicyEvent& e) override {
    events.push_back(fmt::format("{} {}@{}", PolicyEventKindName(e.kind), e.bytes.value(), e.offset.value()) +
                     (e.detail != 0 ? fmt::format(" #{}", e.detail) : ""));
  }
  std::vector<std::string> events;
};

#define EXPECT_INVARIANTS(a) EXPECT_TRUE((a).CheckInvariants().ok()) << (a).CheckInvariants().message()

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_BFC_BFC_TEST_UTIL_H_
