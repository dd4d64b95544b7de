#include "sim/engine/replay_engine.h"

#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/sim/engine/fake_allocator.h"
#include "tests/sim/engine/vector_reader.h"

namespace hbmsim {
namespace {

using testing::FakeAllocator;
using testing::VectorReader;

// Records everything the engine reports, one line per callback.
class Recorder : public ReplayObserver {
 public:
  void OnAlloc(EventIndex i, const Event& e, const AllocResult& r) override {
    log.push_back(fmt::format("alloc {} id={} {} off={} size={}", i.value(), e.id, AllocStatusName(r.status),
                              r.has_offset ? fmt::to_string(r.offset.value()) : "-", r.size.value()));
  }
  void OnFailure(const FailureRecord& f) override {
    log.push_back(fmt::format("fail {} {} id={} req={} rounded={} {} free={} largest={}", f.event.value(),
                              EventKindName(f.event_kind), f.id, f.requested.value(), f.rounded.value(),
                              AllocStatusName(f.kind), f.free_bytes.value(),
                              f.largest_free_block_bytes.value()));
  }
  void OnPolicyEvent(EventIndex i, const PolicyEvent& e) override {
    log.push_back(fmt::format("policy {} {} {}", i.value(), PolicyEventKindName(e.kind), e.bytes.value()));
  }
  void OnMark(EventIndex i, std::string_view label) override {
    log.push_back(fmt::format("mark {} {}", i.value(), label));
  }
  std::vector<std::string> log;
};

struct Outcome {
  absl::StatusOr<ReplaySummary> summary;
  std::vector<std::string> log;
};

ReplayOptions Options(OnOom on_oom, bool paranoid = false, std::optional<DeviceId> device = std::nullopt,
                      bool check_recorded = false) {
  ReplayOptions o;
  o.on_oom = on_oom;
  o.paranoid = paranoid;
  o.device = device;
  o.check_recorded = check_recorded;
  return o;
}

Outcome Replay(FakeAllocator& a, std::vector<std::string> lines, ReplayOptions options = {}) {
  VectorReader reader(std::move(lines));
  Recorder rec;
  ReplayEngine engine(a, options);
  engine.AddObserver(&rec);
  Outcome run{engine.Run(reader), {}};
  run.log = rec.log;
  return run;
}

TEST(ReplayEngineTest, PlacesAllocsAndReusesFreedMemory) {
  FakeAllocator a(Bytes(4096));
  Outcome r = Replay(a, {"alloc 1 1000", "alloc 2 300", "free 1", "alloc 3 200", "mark step=1"});
  ASSERT_TRUE(r.summary.ok()) << r.summary.status();
  // The policy event arrives while the allocator handles the alloc, before its result.
  EXPECT_EQ(r.log, (std::vector<std::string>{"policy 0 region_added 1024", "alloc 0 id=1 ok off=0 size=1024",
                                             "alloc 1 id=2 ok off=1024 size=512", "policy 3 region_added 256",
                                             "alloc 3 id=3 ok off=0 size=256", "mark 4 step=1"}));
  EXPECT_EQ(r.summary->events_read, 5u);
  EXPECT_EQ(r.summary->events_replayed, 5u);
  EXPECT_EQ(r.summary->allocs, 3u);
  EXPECT_EQ(r.summary->marks, 1u);
  EXPECT_EQ(r.summary->failures, 0u);
  EXPECT_EQ(r.summary->peak_live_bytes, Bytes(1300));
  EXPECT_EQ(r.summary->peak_live_event, EventIndex(1));
  EXPECT_EQ(a.frees, 1);
}

TEST(ReplayEngineTest, ContinueRecordsFailureAndIgnoresItsFree) {
  FakeAllocator a(Bytes(2048));
  Outcome r = Replay(a, {"alloc 1 1024", "alloc 2 1500", "free 2", "alloc 3 1024", "free 1"});
  ASSERT_TRUE(r.summary.ok()) << r.summary.status();
  EXPECT_EQ(r.log[2], "alloc 1 id=2 oom off=- size=0");
  EXPECT_EQ(r.log[3], "fail 1 alloc id=2 req=1500 rounded=1536 oom free=1024 largest=1024");
  EXPECT_EQ(r.log[4], "alloc 3 id=3 ok off=1024 size=1024");
  EXPECT_EQ(r.summary->failures, 1u);
  EXPECT_EQ(r.summary->ignored_frees, 1u);
  EXPECT_FALSE(r.summary->stopped_at_failure);
  EXPECT_EQ(a.frees, 1);  // only `free 1` reached the allocator
  // The failed alloc counts in the lower bound: 1024 + 1500 were live at event 1.
  EXPECT_EQ(r.summary->peak_live_bytes, Bytes(2524));
}

TEST(ReplayEngineTest, StopEndsAtTheFirstFailure) {
  FakeAllocator a(Bytes(2048));
  Outcome r = Replay(a, {"alloc 1 1024", "alloc 2 1500", "free 2", "alloc 3 4096"}, Options(OnOom::kStop));
  ASSERT_TRUE(r.summary.ok()) << r.summary.status();
  EXPECT_EQ(r.summary->events_read, 2u);
  EXPECT_EQ(r.summary->failures, 1u);
  EXPECT_TRUE(r.summary->stopped_at_failure);
}

TEST(ReplayEngineTest, FragmentationVerdictComesFromThePolicyNumbers) {
  FakeAllocator a(Bytes(1024));
  Outcome r = Replay(a, {"alloc 1 256", "alloc 2 256", "alloc 3 256", "free 2", "alloc 4 512"});
  ASSERT_TRUE(r.summary.ok()) << r.summary.status();
  EXPECT_EQ(r.log.back(), "fail 4 alloc id=4 req=512 rounded=512 fragmentation free=512 largest=256");
}

TEST(ReplayEngineTest, QueuedFreeKeepsTheBufferLiveUntilCompleted) {
  FakeAllocator a(Bytes(4096));
  Outcome r =
      Replay(a, {"alloc 1 1000", "free_requested 1", "alloc 2 2000", "free_completed 1", "alloc 3 500"});
  ASSERT_TRUE(r.summary.ok()) << r.summary.status();
  EXPECT_EQ(a.requested_frees, 1);
  EXPECT_EQ(a.frees, 1);  // CompleteFree's default is Free
  EXPECT_EQ(r.summary->peak_live_bytes, Bytes(3000));
}

TEST(ReplayEngineTest, ProgramsWithoutAProgramModelAreBuffersOfTheirOwnIdSpace) {
  FakeAllocator a(Bytes(4096));
  Outcome r = Replay(a, {"alloc 1 256", "program_load 1 1024", "program_run 1", "program_unload 1", "free 1",
                         "alloc 2 1000"});
  ASSERT_TRUE(r.summary.ok()) << r.summary.status();
  EXPECT_EQ(a.frees, 2);
  EXPECT_EQ(r.summary->peak_live_bytes, Bytes(1280));
  EXPECT_EQ(r.log.back(), "alloc 5 id=2 ok off=0 size=1024");
}

TEST(ReplayEngineTest, ReplaysOnlyTheDeviceOfTheFirstEventByDefault) {
  FakeAllocator a(Bytes(4096));
  Outcome r = Replay(a, {"alloc 1 256 device=1", "alloc 1 512 device=0", "alloc 2 256 device=1"});
  ASSERT_TRUE(r.summary.ok()) << r.summary.status();
  EXPECT_EQ(r.summary->device, DeviceId(1));
  EXPECT_EQ(r.summary->events_other_device, 1u);
  EXPECT_EQ(r.summary->allocs, 2u);
  EXPECT_EQ(r.log.back(), "alloc 2 id=2 ok off=256 size=256");
}

TEST(ReplayEngineTest, ExplicitDeviceSelectsItsEvents) {
  FakeAllocator a(Bytes(4096));
  Outcome r = Replay(a, {"alloc 1 256 device=1", "alloc 1 512 device=0", "alloc 2 256 device=1"},
                     Options(OnOom::kContinue, false, DeviceId(0)));
  ASSERT_TRUE(r.summary.ok()) << r.summary.status();
  EXPECT_EQ(r.summary->events_other_device, 2u);
  EXPECT_EQ(r.log, (std::vector<std::string>{"policy 1 region_added 512", "alloc 1 id=1 ok off=0 size=512"}));
}

TEST(ReplayEngineTest, ParanoidModeReportsABrokenInvariantAsInternal) {
  FakeAllocator a(Bytes(4096));
  a.break_invariants = true;
  Outcome r = Replay(a, {"alloc 1 256", "free 1"}, Options(OnOom::kContinue, true));
  ASSERT_FALSE(r.summary.ok());
  EXPECT_EQ(r.summary.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(r.summary.status().message(),
            "t.trace:1: event 0 (alloc): broken invariant in fake: blocks overlap at 0x100");
}

TEST(ReplayEngineTest, ParanoidModePassesOnAHealthyAllocator) {
  FakeAllocator a(Bytes(4096));
  Outcome r =
      Replay(a, {"alloc 1 256", "alloc 2 700", "free 1", "alloc 3 100"}, Options(OnOom::kContinue, true));
  EXPECT_TRUE(r.summary.ok()) << r.summary.status();
}

TEST(ReplayEngineTest, ReaderErrorsPassThrough) {
  FakeAllocator a(Bytes(4096));
  Outcome r = Replay(a, {"alloc 1 256", "error"});
  ASSERT_FALSE(r.summary.ok());
  EXPECT_EQ(r.summary.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.summary.status().message(), "t.trace:2: bad line");
}

TEST(ReplayEngineTest, EventsTheReaderDidNotCheckAreRejectedWithTheirLocation) {
  FakeAllocator a(Bytes(4096));
  EXPECT_EQ(Replay(a, {"free 9"}).summary.status().message(), "t.trace:1: free of id 9 that is not live");
  FakeAllocator b(Bytes(4096));
  EXPECT_EQ(Replay(b, {"alloc 1 256", "alloc 1 256"}).summary.status().message(),
            "t.trace:2: alloc of id 1 that is still live");
  FakeAllocator c(Bytes(4096));
  EXPECT_EQ(Replay(c, {"alloc 1 256", "free_completed 1"}).summary.status().message(),
            "t.trace:2: free_completed of id 1 without a free_requested before it");
  FakeAllocator d(Bytes(4096));
  EXPECT_EQ(Replay(d, {"program_run 4"}).summary.status().message(),
            "t.trace:1: program_run of program 4 that is not loaded");
}

TEST(ReplayEngineTest, CheckRecordedComparesAddresses) {
  FakeAllocator a(Bytes(4096));
  Outcome r = Replay(a, {"alloc 1 256 addr=0", "alloc 2 256 addr=512", "alloc 3 256"},
                     Options(OnOom::kContinue, false, std::nullopt, true));
  ASSERT_TRUE(r.summary.ok()) << r.summary.status();
  EXPECT_EQ(r.summary->recorded.allocs_total, 2u);
  EXPECT_EQ(r.summary->recorded.allocs_matched, 1u);
  EXPECT_EQ(r.summary->recorded.segments_total, 0u);
}

}  // namespace
}  // namespace hbmsim
