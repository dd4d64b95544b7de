// Replays device traces of real snapshots (extracted to text fixtures by
// tests/data/torch/extract_fixture.py) and checks every recorded address, every
// recorded segment, and MANIFEST.md's ground truth for the final state.
#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "allocator/torch/torch_allocator.h"
#include "gtest/gtest.h"
#include "tests/allocator/torch/torch_test_util.h"

namespace hbmsim::allocator::torch {
namespace {

using testing::Counter;

struct Fixture {
  std::vector<SegmentSeed> seeds;
  std::vector<std::vector<uint64_t>> live_addresses;  // per seed, its live blocks
  std::vector<std::string> trace;                     // "<action> <addr> <size> <stream>"
};

Fixture LoadFixture(const std::string& name) {
  std::ifstream in(std::string(HBMSIM_SOURCE_DIR) + "/tests/data/torch/" + name);
  Fixture f;
  uint64_t cursor = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string word;
    fields >> word;
    if (word == "segment") {
      uint64_t base, size, stream;
      int small, expandable;
      fields >> base >> size >> stream >> small >> expandable;
      SegmentSeed s{Offset(base), Bytes(size), StreamId(stream), expandable != 0, small != 0, {}};
      f.seeds.push_back(s);
      f.live_addresses.emplace_back();
      cursor = base;
    } else if (word == "block") {
      uint64_t size, requested;
      std::string state;
      fields >> size >> requested >> state;
      const bool free = state == "free";
      f.seeds.back().blocks.push_back({Bytes(size), Bytes(requested),
                                       free ? BlockState::kFree : BlockState::kInUse,
                                       BufferId()});
      if (!free) f.live_addresses.back().push_back(cursor);
      cursor += size;
    } else {
      f.trace.push_back(line);
    }
  }
  return f;
}

class SegmentLog : public PolicyObserver {
 public:
  void OnPolicyEvent(const PolicyEvent& e) override {
    if (e.kind == PolicyEventKind::kRegionAdded) added.push_back({e.offset.value(), e.bytes.value()});
    if (e.kind == PolicyEventKind::kRegionReleased && e.detail == kDetailSegment) {
      released.push_back({e.offset.value(), e.bytes.value()});
    }
    if (e.kind == PolicyEventKind::kRegionReleased && e.detail == kDetailUnmap) {
      unmapped.push_back({e.offset.value(), e.bytes.value()});
    }
    if (e.kind == PolicyEventKind::kRegionExtended) mapped.push_back({e.offset.value(), e.bytes.value()});
  }
  std::vector<std::pair<uint64_t, uint64_t>> added, released, mapped, unmapped;
};

struct ReplayCheck {
  int allocs_matched = 0, allocs_total = 0;
  int segments_matched = 0, segments_total = 0;
  int segment_frees_matched = 0, segment_frees_total = 0;
  int maps_matched = 0, maps_total = 0;
  int unmaps_matched = 0, unmaps_total = 0;
  // The recorded `oom` entries, replayed as requests of their (rounded) size.
  std::vector<std::pair<int, AllocResult>> ooms;  // event index, simulated result
};

int CountMatches(const std::vector<std::pair<uint64_t, uint64_t>>& want,
                 const std::vector<std::pair<uint64_t, uint64_t>>& got) {
  int n = 0;
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) n += want[i] == got[i];
  return n;
}

// Recorded segment_free events come from the user's empty_cache(): when the
// policy has not released as many segments yet, it empties its cache.
ReplayCheck Replay(TorchAllocator& a, const Fixture& f, bool recorded_bases) {
  std::map<uint64_t, Handle> live;  // by recorded address
  for (size_t i = 0; i < f.seeds.size(); ++i) {
    auto handles = a.SeedSegment(f.seeds[i]);
    EXPECT_TRUE(handles.ok()) << handles.status();
    if (!handles.ok()) return {};
    for (size_t k = 0; k < handles->size(); ++k) live[f.live_addresses[i][k]] = (*handles)[k];
  }
  SegmentLog log;
  a.set_observer(&log);
  std::vector<std::pair<uint64_t, uint64_t>> recorded_added, recorded_freed, recorded_maps, recorded_unmaps;
  ReplayCheck check;
  int event = -1;
  for (const std::string& line : f.trace) {
    ++event;
    std::istringstream fields(line);
    std::string action;
    uint64_t addr, size, stream;
    fields >> action >> addr >> size >> stream;
    if (action == "segment_alloc") recorded_added.push_back({addr, size});
    if (action == "segment_map") recorded_maps.push_back({addr, size});
    if (action == "segment_unmap") recorded_unmaps.push_back({addr, size});
    if (action == "oom") {
      AllocRequest req;
      req.bytes = Bytes(size);
      req.stream = StreamId(stream);
      check.ooms.push_back({event, a.Allocate(req)});
    }
    if (action == "segment_free") {
      recorded_freed.push_back({addr, size});
      if (log.released.size() < recorded_freed.size()) a.EmptyCache();
    }
    if (action == "alloc") {
      AllocRequest req;
      req.bytes = Bytes(size);
      req.stream = StreamId(stream);
      if (recorded_bases) req.recorded_address = Offset(addr);
      const AllocResult r = a.Allocate(req);
      ++check.allocs_total;
      check.allocs_matched += r.ok() && r.offset == Offset(addr);
      if (r.ok()) live[addr] = r.handle;
    }
    auto it = live.find(addr);
    if (action == "free_requested" && it != live.end()) a.RequestFree(it->second);
    if (action == "free_completed" && it != live.end()) {
      a.CompleteFree(it->second);
      live.erase(it);
    }
  }
  check.segments_total = static_cast<int>(recorded_added.size());
  check.segments_matched = CountMatches(recorded_added, log.added);
  check.segment_frees_total = static_cast<int>(recorded_freed.size());
  check.segment_frees_matched = CountMatches(recorded_freed, log.released);
  check.maps_total = static_cast<int>(recorded_maps.size());
  check.maps_matched = CountMatches(recorded_maps, log.mapped);
  check.unmaps_total = static_cast<int>(recorded_unmaps.size());
  check.unmaps_matched = CountMatches(recorded_unmaps, log.unmapped);
  a.set_observer(nullptr);
  EXPECT_TRUE(a.CheckInvariants().ok()) << a.CheckInvariants();
  return check;
}

class LargestFree : public MemoryMapVisitor {
 public:
  void OnRegion(const RegionInfo&) override {}
  void OnBlock(const BlockInfo& b) override {
    if (b.state == BlockState::kFree) largest = std::max(largest, b.size.value());
  }
  uint64_t largest = 0;
};

// MANIFEST.md's ground-truth columns.
void ExpectFinalState(const TorchAllocator& a, int64_t reserved, int64_t allocated, int64_t requested,
                      int64_t inactive, uint64_t largest_inactive) {
  EXPECT_EQ(Counter(a, "reserved_bytes.all.current"), reserved);
  EXPECT_EQ(Counter(a, "allocated_bytes.all.current"), allocated);
  EXPECT_EQ(Counter(a, "requested_bytes.all.current"), requested);
  EXPECT_EQ(Counter(a, "reserved_bytes.all.current") - Counter(a, "active_bytes.all.current"), inactive);
  LargestFree largest;
  a.WalkMemoryMap(largest);
  EXPECT_EQ(largest.largest, largest_inactive);
}

TEST(TorchReplay, SmallTraceFromEmpty) {
  const Fixture f = LoadFixture("small_trace_from_empty.txt");
  ASSERT_EQ(f.trace.size(), 97u);
  TorchAllocator a({});
  const ReplayCheck check = Replay(a, f, /*recorded_bases=*/true);
  EXPECT_EQ(check.allocs_total, 36);
  EXPECT_EQ(check.allocs_matched, 36);
  EXPECT_EQ(check.segments_total, 9);
  EXPECT_EQ(check.segments_matched, 9);
  ExpectFinalState(a, 3781165056, 31719936, 31719428, 3749445120, 536870912);
  EXPECT_EQ(Counter(a, "segment.small_pool.current"), 1);
  EXPECT_EQ(Counter(a, "segment.large_pool.current"), 8);
  EXPECT_EQ(Counter(a, "num_alloc_retries"), 0);
  // memory_summary(): 9 segment_allocs (3606 MiB), none freed; 36 allocs, 26 frees.
  const std::string summary = FormatMemorySummary(a.torch_stats(), 0);
  EXPECT_NE(summary.find("| GPU reserved memory   |   3606 MiB |   3606 MiB |   3606 MiB |      0 B   |\n"
                         "|       from large pool |   3604 MiB |   3604 MiB |   3604 MiB |      0 B   |\n"
                         "|       from small pool |      2 MiB |      2 MiB |      2 MiB |      0 B   |\n"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("| GPU reserved segments |       9    |       9    |       9    |       0    |\n"),
            std::string::npos);
  EXPECT_EQ(Counter(a, "allocation.all.current"), 10);
  EXPECT_EQ(Counter(a, "allocation.all.allocated"), 36);
  EXPECT_EQ(Counter(a, "allocation.all.freed"), 26);
}

TEST(TorchReplay, WithoutRecordedBasesTheSameSegmentsComeFromTheDevice) {
  const Fixture f = LoadFixture("small_trace_from_empty.txt");
  TorchAllocator a({});
  const ReplayCheck check = Replay(a, f, /*recorded_bases=*/false);
  EXPECT_EQ(check.allocs_total, 36);
  EXPECT_EQ(check.allocs_matched, 0);  // device addresses start at 0
  EXPECT_EQ(check.segments_matched, 0);
  EXPECT_EQ(Counter(a, "reserved_bytes.all.current"), 3781165056);
  EXPECT_EQ(Counter(a, "segment.all.current"), 9);
}

// 96 segments and 222 blocks live before the trace starts; no new segment.
TEST(TorchReplay, Gen5UserMetadataFromItsInitialState) {
  const Fixture f = LoadFixture("gen5_user_metadata_compile_context.txt");
  ASSERT_EQ(f.seeds.size(), 96u);
  TorchAllocator a({});
  const ReplayCheck check = Replay(a, f, /*recorded_bases=*/true);
  EXPECT_EQ(check.allocs_total, 2162);
  EXPECT_EQ(check.allocs_matched, 2162);
  EXPECT_EQ(check.segments_total, 0);
  ExpectFinalState(a, 4238344192, 3072871424, 3064418304, 1165472768, 155189248);
}

// A forward pass from 227 segments held at the trace start: 289 new segments.
TEST(TorchReplay, Cs336ForwardFromItsInitialState) {
  const Fixture f = LoadFixture("cs336_ctx128_forward.txt");
  ASSERT_EQ(f.seeds.size(), 227u);
  TorchAllocator a({});
  const ReplayCheck check = Replay(a, f, /*recorded_bases=*/true);
  EXPECT_EQ(check.allocs_total, 2058);
  EXPECT_EQ(check.allocs_matched, 2058);
  EXPECT_EQ(check.segments_total, 289);
  EXPECT_EQ(check.segments_matched, 289);
  ExpectFinalState(a, 19667091456, 19498420224, 19352504320, 168671232, 4194304);
  EXPECT_EQ(Counter(a, "segment.small_pool.current"), 10);
  EXPECT_EQ(Counter(a, "segment.large_pool.current"), 506);
}

// Opens with empty_cache() releasing 287 whole free segments, then grows by 471.
TEST(TorchReplay, SegmentFreeBurstReleasesTheSameSegmentsInTheSameOrder) {
  const Fixture f = LoadFixture("cs336_ctx256_forward_segment_free_burst.txt");
  TorchAllocator a({});
  const ReplayCheck check = Replay(a, f, /*recorded_bases=*/true);
  EXPECT_EQ(check.allocs_total, 2057);
  EXPECT_EQ(check.allocs_matched, 2057);
  EXPECT_EQ(check.segments_total, 471);
  EXPECT_EQ(check.segments_matched, 471);
  EXPECT_EQ(check.segment_frees_total, 287);
  EXPECT_EQ(check.segment_frees_matched, 287);
  ExpectFinalState(a, 26545750016, 26388097024, 26252175360, 157652992, 23068672);
  EXPECT_EQ(Counter(a, "segment.small_pool.current"), 19);
  EXPECT_EQ(Counter(a, "segment.large_pool.current"), 681);
}

// Expandable segments on device 1 of an H100 job, from an empty allocator. The
// capacity is what the process could have had at the recorded OOM: the bytes
// reserved then (maps − unmaps up to the oom entry) plus its device_free.
TEST(TorchReplay, ExpandableH100ReproducesItsCapacityOom) {
  const Fixture f = LoadFixture("h100x4_expandable_segments_oom_dev1.txt");
  TorchOptions o;
  o.expandable_segments = true;
  o.capacity = Bytes(84202749952 + 95682560);
  o.device_index = 1;
  TorchAllocator a(o);
  const ReplayCheck check = Replay(a, f, /*recorded_bases=*/true);
  EXPECT_EQ(check.allocs_total, 199);
  EXPECT_EQ(check.allocs_matched, 199);
  EXPECT_EQ(check.maps_total, 40);
  EXPECT_EQ(check.maps_matched, 40);
  EXPECT_EQ(check.unmaps_total, 6);
  EXPECT_EQ(check.unmaps_matched, 6);
  ASSERT_EQ(check.ooms.size(), 1u);
  EXPECT_EQ(check.ooms[0].first, 421);
  const AllocResult& oom = check.ooms[0].second;
  EXPECT_EQ(oom.status, AllocStatus::kOom);  // capacity, not fragmentation
  EXPECT_EQ(oom.rounded, Bytes(5308694528));
  ASSERT_TRUE(a.last_oom().has_value());
  EXPECT_EQ(a.last_oom()->free, Bytes(95682560));  // the recorded device_free
  const std::string want =
      "CUDA out of memory. Tried to allocate 4.95 GiB. GPU 1 has a total capacity of 78.51 GiB of which "
      "91.25 MiB "
      "is free. Of the allocated memory 78.29 GiB is allocated by PyTorch, and 132.93 MiB is reserved by "
      "PyTorch "
      "but unallocated.";
  EXPECT_EQ(FormatOutOfMemoryMessage(*a.last_oom()).substr(0, want.size()), want);
  EXPECT_EQ(Counter(a, "num_ooms"), 1);
  // Two flushes, as recorded: the six unmaps just before the oom entry came from
  // the previous request's flush (its retry then mapped 5.3 GB); the failing
  // request's own flush found nothing left to unmap.
  EXPECT_EQ(Counter(a, "num_alloc_retries"), 2);
}

}  // namespace
}  // namespace hbmsim::allocator::torch
