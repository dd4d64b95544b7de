// ReplayEngine::RunPlain against Run: the same summary, failures and errors,
// event for event, whichever observers and options decide which loop runs.
#include <random>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "sim/engine/replay_engine.h"
#include "tests/sim/engine/fake_allocator.h"
#include "tests/sim/engine/vector_reader.h"

namespace hbmsim {
namespace {

using testing::FakeAllocator;
using testing::VectorReader;

// VectorReader's events as a plain reader gives them.
class PlainVectorReader : public VectorReader {
 public:
  using VectorReader::VectorReader;
  bool NextPlain(PlainEvent& p, absl::Status& stop) {
    Event e;
    absl::StatusOr<bool> more = Next(e);
    if (!more.ok()) stop = more.status();
    if (!more.ok() || !*more) return false;
    p = {e.kind, e.id, e.bytes, e.device, e.stream};
    return true;
  }
};

// What a failures-only observer sees (the trials of `size` keep one).
class Failures : public ReplayObserver {
 public:
  bool needs_allocs_and_releases() const override { return false; }
  void OnFailure(const FailureRecord& f) override {
    log.push_back(fmt::format("fail {} {} id={} req={} rounded={} {} free={} largest={}", f.event.value(),
                              EventKindName(f.event_kind), f.id, f.requested.value(), f.rounded.value(),
                              AllocStatusName(f.kind), f.free_bytes.value(), f.largest_free_block_bytes.value()));
  }
  void OnMark(EventIndex i, std::string_view label) override { log.push_back(fmt::format("mark {} {}", i.value(), label)); }
  std::vector<std::string> log;
};

// An observer that needs every alloc: RunPlain then runs Run's loop.
class Allocs : public Failures {
 public:
  bool needs_allocs_and_releases() const override { return true; }
  void OnAlloc(EventIndex i, const Event& e, const AllocResult& r) override {
    log.push_back(fmt::format("alloc {} id={} {}", i.value(), e.id, AllocStatusName(r.status)));
  }
};

std::string Describe(const absl::StatusOr<ReplaySummary>& s) {
  if (!s.ok()) return std::string(s.status().ToString());
  std::vector<uint64_t> other_devices;
  for (const DeviceId d : s->other_devices) other_devices.push_back(d.value());
  return fmt::format("read={} replayed={} other={} allocs={} failures={} ignored={} marks={} peak={}@{} device={} "
                     "stopped={} other_devices={}",
                     s->events_read, s->events_replayed, s->events_other_device, s->allocs, s->failures,
                     s->ignored_frees, s->marks, s->peak_live_bytes.value(),
                     s->peak_live_event ? fmt::to_string(s->peak_live_event->value()) : "-",
                     s->device ? fmt::to_string(s->device->value()) : "-", s->stopped_at_failure,
                     fmt::join(other_devices, ","));
}

// (A plain event carries no label: the event log keeps marks without theirs.)
// The run of `lines` through Run and through RunPlain, each described with
// its observer's log and the policy's calls.
template <typename Observer>
std::pair<std::string, std::string> BothLoops(const std::vector<std::string>& lines, const ReplayOptions& options,
                                              uint64_t capacity = 4096) {
  std::string out[2];
  for (int plain = 0; plain < 2; ++plain) {
    FakeAllocator a{Bytes(capacity)};
    Observer observer;
    ReplayEngine engine(a, options);
    engine.AddObserver(&observer);
    PlainVectorReader reader(lines);
    const absl::StatusOr<ReplaySummary> s = plain ? engine.RunPlain(reader, a) : engine.Run(reader);
    out[plain] = fmt::format("{} | {} | frees={} requested={}", Describe(s), fmt::join(observer.log, "; "), a.frees,
                             a.requested_frees);
  }
  return {out[0], out[1]};
}

ReplayOptions Stop() {
  ReplayOptions o;
  o.on_oom = OnOom::kStop;
  return o;
}

TEST(ReplayEnginePlainTest, SameSummaryAndFailuresAsRun) {
  const std::vector<std::string> lines = {"alloc 1 1024", "alloc 2 1500", "free 2",       "alloc 3 1024",
                                          "mark",         "free 1",       "alloc 4 3000", "free 3"};
  const auto [run, plain] = BothLoops<Failures>(lines, ReplayOptions{}, 2048);
  EXPECT_EQ(plain, run);
  EXPECT_EQ(plain,
            "read=8 replayed=8 other=0 allocs=4 failures=2 ignored=1 marks=1 peak=4024@6 device=0 stopped=false "
            "other_devices= | fail 1 alloc id=2 req=1500 rounded=1536 oom free=1024 largest=1024; mark 4 ; "
            "fail 6 alloc id=4 req=3000 rounded=3072 oom free=1024 largest=1024 | frees=2 requested=0");
  const auto [run_stop, plain_stop] = BothLoops<Failures>(lines, Stop(), 2048);
  EXPECT_EQ(plain_stop, run_stop);
  EXPECT_EQ(plain_stop.substr(0, 10), "read=2 rep");
}

// Events before peak_from only rebuild a start state (a profile's fillers
// holding its pool): the peak counts from the state they leave, in both loops.
TEST(ReplayEnginePlainTest, ThePeakCountsFromTheStartStateOn) {
  // Events 0-2 build the start state: 1000 B live once filler 2 is freed.
  const std::vector<std::string> start = {"alloc 1 1000", "alloc 2 2000", "free 2"};
  ReplayOptions from3;
  from3.peak_from = 3;
  std::vector<std::string> grows = start;
  grows.insert(grows.end(), {"alloc 3 500", "free 3", "alloc 4 100"});
  const auto [run, plain] = BothLoops<Failures>(grows, from3, 8192);
  EXPECT_EQ(plain, run);
  EXPECT_EQ(plain.substr(0, plain.find(" device=")),
            "read=6 replayed=6 other=0 allocs=4 failures=0 ignored=0 marks=0 peak=1500@3");
  // Nothing after the start state grows: its own state is the peak, at its last event.
  std::vector<std::string> shrinks = start;
  shrinks.push_back("free 1");
  const auto [run2, plain2] = BothLoops<Failures>(shrinks, from3, 8192);
  EXPECT_EQ(plain2, run2);
  EXPECT_NE(plain2.find(" peak=1000@2 "), std::string::npos) << plain2;
  // A trace that ends with its start state: the same.
  const auto [run3, plain3] = BothLoops<Failures>(start, from3, 8192);
  EXPECT_EQ(plain3, run3);
  EXPECT_NE(plain3.find(" peak=1000@2 "), std::string::npos) << plain3;
  // Without peak_from the filler is the peak.
  const auto [run4, plain4] = BothLoops<Failures>(grows, ReplayOptions{}, 8192);
  EXPECT_NE(plain4.find(" peak=3000@1 "), std::string::npos) << plain4;
}

// At the start state's end the policy's stats restart (Allocator::ClearStats,
// TF's BFCAllocator::ClearStats): num_allocs 0, peak = in use, largest 0.
TEST(ReplayEnginePlainTest, ThePolicysStatsRestartAfterTheStartState) {
  for (int plain = 0; plain < 2; ++plain) {
    FakeAllocator a{Bytes(8192)};
    ReplayOptions from3;
    from3.peak_from = 3;
    ReplayEngine engine(a, from3);
    PlainVectorReader reader({"alloc 1 1000", "alloc 2 2000", "free 2", "alloc 3 300"});
    ASSERT_TRUE((plain ? engine.RunPlain(reader, a) : engine.Run(reader)).ok());
    const AllocatorStats s = a.GetStats();
    EXPECT_EQ(s.num_allocs, 1) << plain;
    EXPECT_EQ(s.bytes_in_use, 1024 + 512) << plain;  // the fake rounds to multiples of 256
    EXPECT_EQ(s.peak_bytes_in_use, 1024 + 512) << plain;
    EXPECT_EQ(s.largest_alloc_size, 512) << plain;
  }
}

TEST(ReplayEnginePlainTest, RareKindsAndOtherDevicesGoThroughApply) {
  const std::vector<std::string> lines = {"alloc 1 1000", "free_requested 1", "alloc 2 2000 device=3",
                                          "alloc 2 2000", "free_completed 1", "program_load 1 1024",
                                          "program_run 1", "program_unload 1", "alloc 5 500 device=2"};
  const auto [run, plain] = BothLoops<Failures>(lines, ReplayOptions{});
  EXPECT_EQ(plain, run);
  EXPECT_EQ(plain,
            "read=9 replayed=7 other=2 allocs=2 failures=0 ignored=0 marks=0 peak=3024@5 device=0 stopped=false "
            "other_devices=2,3 |  | frees=2 requested=1");
}

TEST(ReplayEnginePlainTest, ErrorsNameTheEventAsRunDoes) {
  for (const std::vector<std::string>& lines :
       std::vector<std::vector<std::string>>{{"free 9"},
                                             {"alloc 1 256", "alloc 1 256"},
                                             {"alloc 1 256", "free_completed 1"},
                                             {"alloc 1 256", "free_requested 1", "free 1"},
                                             {"alloc 1 256", "error"}}) {
    const auto [run, plain] = BothLoops<Failures>(lines, ReplayOptions{});
    EXPECT_EQ(plain, run);
    EXPECT_EQ(plain.substr(0, 17), "INVALID_ARGUMENT:") << plain;
  }
  EXPECT_EQ(BothLoops<Failures>({"alloc 1 256", "alloc 1 256"}, ReplayOptions{}).second,
            "INVALID_ARGUMENT: t.trace:2: alloc of id 1 that is still live |  | frees=0 requested=0");
}

TEST(ReplayEnginePlainTest, AnObserverOfEveryAllocGetsRunsLoop) {
  const std::vector<std::string> lines = {"alloc 1 1024", "alloc 2 4000", "free 1", "alloc 3 512"};
  const auto [run, plain] = BothLoops<Allocs>(lines, ReplayOptions{});
  EXPECT_EQ(plain, run);
  EXPECT_NE(plain.find("alloc 0 id=1 ok; alloc 1 id=2 oom"), std::string::npos) << plain;
}

// Random programs: allocs and frees of random sizes on two devices, enough to fail often.
TEST(ReplayEnginePlainTest, RandomProgramsReplayAlike) {
  std::mt19937_64 rng(20261127);
  for (int program = 0; program < 40; ++program) {
    std::vector<std::string> lines;
    std::vector<uint64_t> live;
    uint64_t next_id = 1;
    for (int i = 0; i < 400; ++i) {
      const std::string device = rng() % 10 == 0 ? " device=1" : "";
      if (!live.empty() && rng() % 2 == 0) {
        const size_t at = rng() % live.size();
        lines.push_back(fmt::format("free {}{}", live[at], device));
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
      } else {
        lines.push_back(fmt::format("alloc {} {}{}", next_id, 1 + rng() % 1500, device));
        live.push_back(next_id++);
      }
    }
    for (const ReplayOptions& options : {ReplayOptions{}, Stop()}) {
      const auto [run, plain] = BothLoops<Failures>(lines, options);
      ASSERT_EQ(plain, run) << "program " << program;
    }
  }
}

}  // namespace
}  // namespace hbmsim
