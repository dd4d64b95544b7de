// The policy events of the cuda_async pool, worked out by hand: mapping and
// unmapping granules are reported per contiguous run (what PyTorch's
// snapshots call segment_map / segment_unmap), split where one VA range ends
// and the next begins; reserving and giving back VA is no event.
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/allocator/cuda_async/cuda_async_test_util.h"

namespace hbmsim::testing {
namespace {

class EventLog : public PolicyObserver {
 public:
  void OnPolicyEvent(const PolicyEvent& e) override {
    const bool pages = e.detail == kRegionPagesMapped || e.detail == kRegionPagesUnmapped;
    events.push_back(fmt::format("{} {}@{}{}{}", PolicyEventKindName(e.kind), e.bytes.value(), e.offset.value(),
                                 pages ? "" : " whole", e.stream == std::optional<uint64_t>(0) ? "" : " stream?"));
  }
  std::vector<std::string> events;
};

TEST(CudaAsyncEventsTest, EachMappedRunIsOneEventAndVaIsNone) {
  CudaAsyncOptions o = SmallPool(8192);
  o.release_threshold = 0;
  CudaAsyncAllocator a(o);
  EventLog log;
  a.set_observer(&log);
  // 3 granules at once: one event; the free gives them back as one run, and
  // the empty range goes back without an event.
  a.Free(Alloc(a, 1, 3000).handle);
  EXPECT_EQ(log.events, (std::vector<std::string>{"region_extended 3072@0", "region_released 3072@0"}));
  EXPECT_EQ(CounterValue(a, "ranges_released"), 1);
}

TEST(CudaAsyncEventsTest, OnePlacementFillsTwoHoles) {
  CudaAsyncOptions o = SmallPool(8192);
  o.release_threshold = 2048;
  CudaAsyncAllocator a(o);
  EventLog log;
  a.set_observer(&log);
  const Handle x = Alloc(a, 1, 1024).handle;
  const Handle y = Alloc(a, 2, 1024).handle;
  const Handle z = Alloc(a, 3, 1024).handle;
  a.Free(x);  // 3 granules mapped > 2: x's own granule goes
  a.Free(y);
  a.Free(z);
  ASSERT_EQ(Map(a), "0:1024:unmapped 1024:2048:free 3072:1024:unmapped");
  // The whole range: granules 0 and 3 are mapped again, two runs.
  EXPECT_EQ(Alloc(a, 4, 4096).offset.value(), 0u);
  EXPECT_EQ(log.events, (std::vector<std::string>{"region_extended 1024@0", "region_extended 1024@1024",
                                                  "region_extended 1024@2048", "region_released 1024@0",
                                                  "region_extended 1024@0", "region_extended 1024@3072"}));
}

TEST(CudaAsyncEventsTest, ARemapAcrossTwoRangesIsTwoEvents) {
  CudaAsyncAllocator a(SmallPool(8192));  // 8 granules, nothing released at frees
  EventLog log;
  a.set_observer(&log);
  Alloc(a, 1, 3072);                             // range [0, 4096), granules 0-2
  const Handle b = Alloc(a, 2, 1024).handle;     // granule 3
  const Handle c = Alloc(a, 3, 1024).handle;     // range [4096, 8192), granule 4
  EXPECT_EQ(Alloc(a, 4, 3072).offset.value(), 5120u);  // granules 5-7: 8 mapped
  a.Free(b);
  a.Free(c);
  // No 2 KiB block and no room: granules 4 and 3 (one mapped run, two
  // ranges) are unmapped and a third range is mapped.
  EXPECT_EQ(Alloc(a, 5, 2048).offset.value(), 8192u);
  EXPECT_EQ(log.events, (std::vector<std::string>{"region_extended 3072@0", "region_extended 1024@3072",
                                                  "region_extended 1024@4096", "region_extended 3072@5120",
                                                  "region_released 1024@3072", "region_released 1024@4096",
                                                  "region_extended 2048@8192"}));
  EXPECT_EQ(a.GetStats().pool_bytes, 8192);
}

}  // namespace
}  // namespace hbmsim::testing
