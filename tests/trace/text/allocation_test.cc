// Reading allocates nothing per event once warm: tags and labels are views
// into the line buffer, shapes fit the InlinedVector, and the validator's hash
// map has reached the size of the live set. Counted by
// tests/common/heap_counter, which replaces operator new for this test binary.
#include <cstdlib>
#include <new>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/common/heap_counter.h"
#include "trace/text/text_reader.h"

namespace hbmsim {
namespace {

// Steady state: 50 live ids, every kind of line, all attributes.
std::string SteadyTrace(int rounds) {
  std::string text = "# hbmsim-trace v1\nprogram_load 1 4096 tag=exe\n";
  auto out = std::back_inserter(text);
  for (int i = 0; i < rounds; ++i) {
    fmt::format_to(out, "alloc {} 1MiB t={} stream=1 tag=activation shape=bf16[{},2,3,4,5,6] addr=0x{:x}\n",
                   i, i, i, i * 4096);
    if (i >= 50) {
      if (i % 2 == 0) {
        fmt::format_to(out, "free {} t={} stream=1\n", i - 50, i);
      } else {
        fmt::format_to(out, "free_requested {} t={}\nfree_completed {} t={}\n", i - 50, i, i - 50, i);
      }
    }
    fmt::format_to(out, "mark step={} t={}\nprogram_run 1 t={}\n", i, i, i);
  }
  return text;
}

TEST(AllocationTest, NoHeapAllocationPerEventInSteadyState) {
  absl::StatusOr<std::unique_ptr<TextTraceReader>> reader = TextTraceReader::FromString(SteadyTrace(20'000));
  ASSERT_TRUE(reader.ok());
  Event e;
  for (int i = 0; i < 5'000; ++i) ASSERT_TRUE(*(*reader)->Next(e));  // warm up
  const uint64_t before = testing::HeapAllocationCount();
  uint64_t events = 0;
  while (true) {
    absl::StatusOr<bool> got = (*reader)->Next(e);
    ASSERT_TRUE(got.ok()) << got.status();
    if (!*got) break;
    ++events;
  }
  EXPECT_EQ(testing::HeapAllocationCount() - before, 0u);
  EXPECT_GT(events, 70'000u);
}

// The counter itself works: a failed line builds a message on the heap.
TEST(AllocationTest, CounterSeesAllocations) {
  absl::StatusOr<std::unique_ptr<TextTraceReader>> reader = TextTraceReader::FromString("alloc 1 256\nbogus 1\n");
  ASSERT_TRUE(reader.ok());
  Event e;
  ASSERT_TRUE((*reader)->Next(e).ok());
  const uint64_t before = testing::HeapAllocationCount();
  EXPECT_FALSE((*reader)->Next(e).ok());
  EXPECT_GT(testing::HeapAllocationCount() - before, 0u);
}

}  // namespace
}  // namespace hbmsim
