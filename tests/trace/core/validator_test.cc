#include "trace/core/validator.h"

#include <algorithm>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/trace/text/trace_test_util.h"

namespace hbmsim {
namespace {

Event Ev(EventKind kind, uint64_t id, uint64_t device = 0, std::optional<uint64_t> t = std::nullopt) {
  Event e;
  e.kind = kind;
  e.id = id;
  e.device = DeviceId(device);
  e.time_us = t;
  return e;
}

std::string Message(const absl::Status& s) { return s.ok() ? "ok" : std::string(s.message()); }

TEST(TraceValidatorTest, BufferLifecycle) {
  TraceValidator v;
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kAlloc, 1))), "ok");
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kAlloc, 2))), "ok");
  EXPECT_EQ(v.buffers().size(), 2u);
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kFree, 1))), "ok");
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kFreeRequested, 2))), "ok");
  ASSERT_NE(v.buffers().Find(DeviceId(0), BufferId(2)), nullptr);
  EXPECT_EQ(*v.buffers().Find(DeviceId(0), BufferId(2)), LiveBufferIds::State::kFreeRequested);
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kFreeCompleted, 2))), "ok");
  EXPECT_EQ(v.buffers().size(), 0u);
  // An id may be reused once it is free.
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kAlloc, 1))), "ok");
}

TEST(TraceValidatorTest, AllocOfLiveIdIsAnError) {
  TraceValidator v;
  ASSERT_TRUE(v.Check(Ev(EventKind::kAlloc, 7)).ok());
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kAlloc, 7))), "alloc of id 7 that is still live");
  ASSERT_TRUE(v.Check(Ev(EventKind::kFreeRequested, 7)).ok());
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kAlloc, 7))),
            "alloc of id 7 that is still live (free_requested, but no free_completed yet)");
}

TEST(TraceValidatorTest, FreeOfIdThatIsNotLive) {
  TraceValidator v;
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kFree, 3))), "free of id 3 that is not live");
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kFreeRequested, 3))), "free_requested of id 3 that is not live");
  ASSERT_TRUE(v.Check(Ev(EventKind::kAlloc, 3)).ok());
  ASSERT_TRUE(v.Check(Ev(EventKind::kFreeRequested, 3)).ok());
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kFree, 3))), "free of id 3 that was already free_requested");
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kFreeRequested, 3))),
            "free_requested of id 3 that was already free_requested");
}

TEST(TraceValidatorTest, FreeCompletedNeedsPendingRequest) {
  TraceValidator v;
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kFreeCompleted, 4))),
            "free_completed of id 4 without a pending free_requested");
  ASSERT_TRUE(v.Check(Ev(EventKind::kAlloc, 4)).ok());
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kFreeCompleted, 4))),
            "free_completed of id 4 without a pending free_requested");
}

TEST(TraceValidatorTest, DevicesHaveSeparateIds) {
  TraceValidator v;
  ASSERT_TRUE(v.Check(Ev(EventKind::kAlloc, 1, /*device=*/0)).ok());
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kAlloc, 1, /*device=*/1))), "ok");
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kAlloc, 1, /*device=*/1))),
            "alloc of id 1 on device 1 that is still live");
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kFree, 2, /*device=*/3))),
            "free of id 2 on device 3 that is not live");
  EXPECT_EQ(v.buffers().size(), 2u);
}

TEST(TraceValidatorTest, Programs) {
  TraceValidator v;
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kProgramRun, 5))),
            "program_run of unknown program 5 (never loaded, or unloaded)");
  ASSERT_TRUE(v.Check(Ev(EventKind::kProgramLoad, 5)).ok());
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kProgramLoad, 5))),
            "program_load of program 5 that is already loaded");
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kProgramRun, 5))), "ok");
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kProgramRun, 5, /*device=*/2))),
            "program_run of unknown program 5 on device 2 (never loaded, or unloaded)");
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kProgramUnload, 5))), "ok");
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kProgramUnload, 5))),
            "program_unload of unknown program 5 (never loaded, or unloaded)");
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kProgramRun, 5))),
            "program_run of unknown program 5 (never loaded, or unloaded)");
  EXPECT_EQ(v.programs().size(), 0u);
}

TEST(TraceValidatorTest, TimeIsNonDecreasing) {
  TraceValidator v;
  ASSERT_TRUE(v.Check(Ev(EventKind::kMark, 0, 0, 10)).ok());
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kMark, 0, 0, 10))), "ok");  // equal is fine
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kMark, 0, 0))), "ok");      // unstamped events don't reset
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kAlloc, 1, 0, 9))),
            "t=9 is earlier than t=10 of a previous event (time stamps must be non-decreasing)");
  EXPECT_EQ(v.last_time_us(), 10u);
}

TEST(TraceValidatorTest, RejectedEventChangesNothing) {
  TraceValidator v;
  ASSERT_TRUE(v.Check(Ev(EventKind::kAlloc, 1, 0, 100)).ok());
  // A valid free, but stamped in the past: neither the free nor the time applies.
  EXPECT_FALSE(v.Check(Ev(EventKind::kFree, 1, 0, 50)).ok());
  ASSERT_NE(v.buffers().Find(DeviceId(0), BufferId(1)), nullptr);
  EXPECT_EQ(v.last_time_us(), 100u);
  // A rejected alloc leaves the later time stamp unrecorded.
  EXPECT_FALSE(v.Check(Ev(EventKind::kAlloc, 1, 0, 200)).ok());
  EXPECT_EQ(v.last_time_us(), 100u);
  EXPECT_EQ(Message(v.Check(Ev(EventKind::kFree, 1, 0, 150))), "ok");
}

// A long trace that never has more than 100 live ids: what the validator
// tracks follows the live set, not the trace length.
TEST(TraceValidatorTest, MemoryFollowsLiveIdsNotTraceLength) {
  constexpr int kAllocs = 500'050;  // with their frees, just over a million events
  constexpr int kLive = 100;
  std::string text = "# hbmsim-trace v1\n";
  text.reserve(kAllocs * 40);
  uint64_t next_id = 0;
  for (int i = 0; i < kAllocs; ++i) {
    fmt::format_to(std::back_inserter(text), "alloc {} 4096 t={}\n", next_id, i);
    if (next_id >= kLive - 1) fmt::format_to(std::back_inserter(text), "free {}\n", next_id - (kLive - 1));
    ++next_id;
  }
  absl::StatusOr<std::unique_ptr<TextTraceReader>> reader = TextTraceReader::FromString(std::move(text));
  ASSERT_TRUE(reader.ok());
  Event e;
  size_t max_tracked = 0;
  uint64_t events = 0;
  while (true) {
    absl::StatusOr<bool> got = (*reader)->Next(e);
    ASSERT_TRUE(got.ok()) << got.status();
    if (!*got) break;
    ++events;
    max_tracked = std::max(max_tracked, (*reader)->validator().buffers().size());
  }
  EXPECT_EQ(events, 1'000'001u);
  EXPECT_EQ(max_tracked, size_t{kLive});
  EXPECT_EQ((*reader)->validator().buffers().size(), size_t{kLive - 1});
}

}  // namespace
}  // namespace hbmsim
