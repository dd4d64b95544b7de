// The reconciliation of a sampled memory profile (trace/xplane/sampled.h) on
// records written here, and what it makes of a top-down (TPU) profile's
// start state and events (profile_trace.h).
#include "trace/xplane/sampled.h"

#include <cstdio>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "trace/xplane/memory_profile_json.h"
#include "trace/xplane/profile_trace.h"

namespace hbmsim::trace::xplane {
namespace {

MemoryRecord Rec(bool allocation, uint64_t addr, std::optional<int64_t> chunk, int64_t in_use) {
  static int64_t t = 0;
  MemoryRecord r;
  r.allocation = allocation;
  r.time_ps = ++t * 1000000;
  r.addr = addr;
  r.allocation_bytes = chunk;
  if (allocation) r.requested_bytes = chunk;
  r.bytes_allocated = in_use;
  r.where = fmt::format("snapshots[{}]", in_use);
  return r;
}

// 40 bytes live before; sizes are kept tiny so each step is worked by hand.
AllocatorRecording Sampled() {
  AllocatorRecording a;
  a.name = "0";
  a.records = {
      Rec(true, 1000, 100, 140),            // in use 40 -> 140
      Rec(true, 1000, 100, 140),            // 1000 again: its free was lost
      Rec(false, 2000, std::nullopt, 100),  // never seen: live before, 40 bytes (the drop)
      Rec(false, 2000, std::nullopt, 70),   // freed again: its allocation was lost; 30 more gone
      Rec(true, 3000, 50, 170),             // +50 more than the 50 allocated
  };
  return a;
}

std::string Kinds(const AllocatorRecording& a) {
  std::string out;
  for (const MemoryRecord& r : a.records) {
    const char* why = r.missing == Missing::kNone         ? ""
                      : r.missing == Missing::kFree       ? "lost "
                      : r.missing == Missing::kAllocation ? "lost "
                                                          : "bytes ";
    out +=
        fmt::format("{}{}{} {}; ", why, r.allocation ? "A" : "F", r.addr ? fmt::format(" {}", *r.addr) : "",
                    r.allocation_bytes.value_or(r.inferred_chunk.value_or(-1)));
  }
  return out;
}

TEST(Sampled, EachGapIsReconciledFromTheFigures) {
  AllocatorRecording a = Sampled();
  const MissingEvents m = ReconcileSampled(a);
  EXPECT_EQ(Kinds(a),
            "A 1000 100; lost F 1000 100; A 1000 100; F 2000 40; lost A 2000 40; bytes F 30; F 2000 40; "
            "bytes A 50; A 3000 50; ");
  EXPECT_EQ(m.recorded, 5);
  EXPECT_EQ(m.frees, 1);
  EXPECT_EQ(m.allocations, 1);
  EXPECT_EQ(m.unexplained, 2);
  EXPECT_EQ(m.bytes_in, 50);
  EXPECT_EQ(m.bytes_out, 30);
  ASSERT_EQ(m.gaps.size(), 3u);
  EXPECT_EQ(m.gaps[0].before, 1u);
  EXPECT_EQ(m.gaps[1].before, 3u);
  EXPECT_EQ(m.gaps[1].unexplained_bytes, -30);
  EXPECT_EQ(m.gaps[2].unexplained_bytes, 50);
  EXPECT_EQ(a.records[1].where, "missing before snapshots[140]");
  EXPECT_EQ(
      m.Note(),
      "sampled: 3 gaps of 5 records lost events (reconciled from the figures): 1 frees and 1 allocations "
      "missing at recorded addresses, 2 gaps where bytes in use moved by events of unknown address "
      "(+50 B allocated, -30 B freed); the first before snapshots[140], snapshots[70], snapshots[170]");
}

TEST(Sampled, AWholeRecordingGetsNothingInserted) {
  AllocatorRecording a;
  a.records = {Rec(true, 1000, 100, 100), Rec(true, 2000, 50, 150), Rec(false, 1000, 100, 50),
               Rec(false, 2000, std::nullopt, 0)};
  const MissingEvents m = ReconcileSampled(a);
  EXPECT_FALSE(m.any());
  EXPECT_EQ(m.recorded, 4);
  EXPECT_EQ(a.records.size(), 4u);
}

// A newer XProf keeps the sampled timeline apart; memoryProfileSnapshots then holds only the
// peak's live allocations, so the timeline is read.
TEST(Sampled, TheSampledTimelineIsReadWhenTheFileKeepsItApart) {
  const std::string snap =
      R"({"timeOffsetPs":"%d","aggregationStats":{"heapAllocatedBytes":"%d"},)"
      R"("activityMetadata":{"memoryActivity":"%s","allocationBytes":"512","address":"%d"}})";
  const auto one = [&](int t, int heap, const char* act, int addr) {
    std::string out(256, '\0');
    out.resize(std::snprintf(out.data(), out.size(), snap.c_str(), t, heap, act, addr));
    return out;
  };
  const std::string json = R"({"memoryProfilePerAllocator":{"0":{"memoryProfileSnapshots":[)" +
                           one(1, 512, "ALLOCATION", 4096) + R"(],"sampledTimelineSnapshots":[)" +
                           one(1, 512, "ALLOCATION", 4096) + "," + one(2, 0, "DEALLOCATION", 4096) + "]}}}";
  absl::StatusOr<Profile> p = ParseMemoryProfile(json, "t.json");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->allocators.size(), 1u);
  EXPECT_EQ(p->allocators[0].allocations, 1);
  EXPECT_EQ(p->allocators[0].deallocations, 1);
  EXPECT_EQ(p->allocators[0].records[1].where, "memoryProfilePerAllocator.0.sampledTimelineSnapshots[1]");
}

TEST(Sampled, TheStartStateAndTheEventsOfATopDownProfile) {
  Profile p;
  p.source = "t.json";
  p.form = "memory_profile_json";
  p.allocators.push_back(Sampled());
  for (MemoryRecord& r : p.allocators[0].records) {
    r.bytes_available = 4096 - *r.bytes_allocated - 500;  // a 4096-byte device, 500 reserved by programs
    r.bytes_reserved = 500;
  }
  absl::StatusOr<ProfileTrace> t = BuildProfileTrace(std::move(p));
  ASSERT_TRUE(t.ok()) << t.status();
  const StartState& s = t->devices[0].start;
  EXPECT_TRUE(s.top_down);
  EXPECT_FALSE(s.grown);
  EXPECT_EQ(s.limit, 4096);
  EXPECT_EQ(s.reserved_before, 500);
  EXPECT_EQ(s.bytes_in_use_before, 40);
  EXPECT_EQ(s.unknown_bytes, 0);  // the 40 bytes are the chunk at 2000
  EXPECT_EQ(t->devices[0].missing.frees, 1);
  std::string events;
  for (OwnedEvent& o : t->events) {
    const Event& e = o.get();
    events += fmt::format("{} {}{}{}; ", EventKindName(e.kind), e.bytes.value(),
                          e.addr ? fmt::format(" @{}", *e.addr) : "",
                          e.tag.empty() ? "" : fmt::format(" {}", e.tag));
  }
  // Programs at the bottom; from the limit down: free above 2040, the chunk at 2000, free down to
  // the lowest address touched. Then the records: a lost free and a lost allocation where they
  // were missing, the 50 bytes allocated at an unknown address; the 30 freed at one find no
  // unknown chunk to free (none was live before), and the report says so.
  EXPECT_EQ(events,
            "program_load 500 programs; alloc 2056 start_free; alloc 40 @2000 preexisting; "
            "alloc 1000 start_free; free 0; free 0; alloc 100 @1000; free 0; alloc 100 @1000; free 0; "
            "alloc 40 lost_event; free 0; alloc 50 lost_event; alloc 50 @3000; ");
  EXPECT_EQ(t->devices[0].unknown_unreleased, 30);
  EXPECT_EQ(
      s.notes.back(),
      "30 B freed at unknown addresses found no unknown chunk left to free: bytes in use reads that much "
      "higher from then on");
}

}  // namespace
}  // namespace hbmsim::trace::xplane
