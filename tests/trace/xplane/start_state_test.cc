// The start-state inference (trace/xplane/start_state.h) and the events built
// on it (profile_trace.h), on records written here: deallocations without a
// size (as a TPU profile has them), a gap taken as live, the rest below.
#include "trace/xplane/start_state.h"

#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "trace/xplane/profile_trace.h"

namespace hbmsim::trace::xplane {
namespace {

MemoryRecord Rec(bool allocation, int64_t t, uint64_t addr, std::optional<int64_t> requested,
                 std::optional<int64_t> chunk, int64_t in_use) {
  MemoryRecord r;
  r.allocation = allocation;
  r.time_ps = t * 1000000;
  r.addr = addr;
  r.requested_bytes = requested;
  r.allocation_bytes = chunk;
  r.bytes_allocated = in_use;
  r.bytes_available = 13072 - in_use;
  r.where = "record " + std::to_string(t);
  return r;
}

// 2048 bytes in use before: 256 at 0x9f00 (freed at record 1), 1792 never freed.
AllocatorRecording SizelessFrees() {
  AllocatorRecording a;
  a.name = "TPU_0_bfc";
  a.records = {Rec(true, 0, 0xA000, 1000, 1024, 3072),
               Rec(false, 1, 0x9F00, std::nullopt, std::nullopt, 2816),
               Rec(false, 2, 0xA000, std::nullopt, std::nullopt, 1792), Rec(true, 3, 0xA800, 512, 512, 2304)};
  a.allocations = 2;
  a.deallocations = 2;
  return a;
}

TEST(StartState, SizesOfSizelessFreesComeFromTheTotalsOrTheirAllocation) {
  absl::StatusOr<StartState> s = InferStartState(SizelessFrees(), "t.pb");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->records.size(), 4u);
  EXPECT_EQ(s->records[1].chunk_bytes, 256);
  EXPECT_EQ(s->records[1].chunk_from, "the change of bytes_allocated");
  EXPECT_TRUE(s->records[1].preexisting);
  EXPECT_EQ(s->records[2].chunk_bytes, 1024);
  EXPECT_EQ(s->records[2].chunk_from, "its allocation's chunk");
  EXPECT_EQ(s->records[2].requested_bytes, 1024);  // no requested_bytes: the chunk
  EXPECT_EQ(s->bytes_in_use_before, 2048);
  EXPECT_EQ(s->unknown_bytes, 1792);
  EXPECT_EQ(s->limit, 13072);
  EXPECT_EQ(s->lowest_touched, 0x9F00u);
  EXPECT_EQ(s->highest_touched, 0xAA00u);
  // The 1024-byte gap [0xa400, 0xa800) is never touched: live; 768 more below.
  ASSERT_EQ(s->chunks.size(), 4u);
  const std::vector<std::tuple<uint64_t, int64_t, StartChunkKind>> want = {
      {0x9C00, 768, StartChunkKind::kUnknown},
      {0x9F00, 256, StartChunkKind::kKnown},
      {0xA000, 1024, StartChunkKind::kHole},
      {0xA400, 1024, StartChunkKind::kUnknown}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(s->chunks[i].addr, std::get<0>(want[i])) << i;
    EXPECT_EQ(s->chunks[i].size, std::get<1>(want[i])) << i;
    EXPECT_EQ(s->chunks[i].kind, std::get<2>(want[i])) << i;
  }
  EXPECT_EQ(s->chunks[1].freed_by, 1u);
  EXPECT_EQ(s->base(), 0x9C00u);
  ASSERT_EQ(s->notes.size(), 1u);
  EXPECT_EQ(s->notes[0],
            "chunk sizes missing from records were inferred (the change of bytes_allocated, ...)");
}

TEST(StartState, TheEventsRebuildTheLayoutThenFollowTheRecords) {
  Profile p;
  p.source = "t.pb";
  p.form = "xplane";
  p.allocators.push_back(SizelessFrees());
  absl::StatusOr<ProfileTrace> t = BuildProfileTrace(std::move(p));
  ASSERT_TRUE(t.ok()) << t.status();
  std::vector<std::string> got;
  for (OwnedEvent& o : t->events) {
    const Event& e = o.get();
    std::string line = fmt::format("{} {}", EventKindName(e.kind), e.id);
    if (e.kind == EventKind::kAlloc) line += fmt::format(" {}", e.bytes.value());
    if (!e.tag.empty()) line += fmt::format(" tag={}", e.tag);
    if (e.addr) line += fmt::format(" addr={:#x}", *e.addr);
    if (e.time_us) line += fmt::format(" t={}", *e.time_us);
    got.push_back(line);
  }
  const std::vector<std::string> want = {"alloc 1 768 tag=preexisting_unknown addr=0x9c00",
                                         "alloc 2 256 tag=preexisting addr=0x9f00",
                                         "alloc 3 1024 tag=start_free",
                                         "alloc 4 1024 tag=preexisting_unknown",
                                         "free 3",
                                         "alloc 5 1000 addr=0xa000 t=0",
                                         "free 2 t=1",
                                         "free 5 t=2",
                                         "alloc 6 512 addr=0xa800 t=3"};
  EXPECT_EQ(got, want);
  EXPECT_EQ(t->origins[5].record, 0);
  EXPECT_EQ(t->origins[4].record, -1);
  EXPECT_EQ(t->devices[0].buffer_of_record, (std::vector<uint64_t>{5, 2, 5, 6}));
  EXPECT_EQ(*t->metadata.Find("device_bytes"), "13072");
}

// An allocator whose first record frees, with no size field, a chunk allocated
// before the recording (fuzz_xplane found it: such a chunk was placed as zero
// bytes, so no event held it and its free had nothing to release).
TEST(StartState, AFirstRecordFreeingWithoutAnySizeTakesTheSmallestChunk) {
  AllocatorRecording a;
  a.name = "TPU_1";
  MemoryRecord r = Rec(false, 0, 0x10000000, std::nullopt, std::nullopt, 0);
  r.bytes_allocated.reset();
  a.records = {r, Rec(true, 1, 0x10000000, 500, 512, 512), Rec(false, 2, 0x10000000, std::nullopt, std::nullopt, 0)};
  absl::StatusOr<StartState> s = InferStartState(a, "t.pb");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->records[0].chunk_bytes, 256);
  EXPECT_EQ(s->records[0].chunk_from, "none recorded: the smallest chunk, 256 bytes");
  Profile p;
  p.source = "t.pb";
  p.allocators.push_back(a);
  absl::StatusOr<ProfileTrace> t = BuildProfileTrace(std::move(p));
  ASSERT_TRUE(t.ok()) << t.status();
  std::vector<std::string> got;
  for (OwnedEvent& o : t->events) {
    const Event& e = o.get();
    got.push_back(fmt::format("{} {} {}", EventKindName(e.kind), e.id, e.kind == EventKind::kAlloc ? e.bytes.value() : 0));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"alloc 1 256", "free 1 0", "alloc 2 500", "free 2 0"}));
}

TEST(StartState, ContradictoryRecordsAreErrorsNamingTheRecord) {
  AllocatorRecording a = SizelessFrees();
  a.records[3].addr = 0xA000;
  a.records[2].time_ps = 5000000;  // the free of 0xa000 now comes after its reuse
  std::stable_sort(a.records.begin(), a.records.end(),
                   [](const MemoryRecord& x, const MemoryRecord& y) { return x.time_ps < y.time_ps; });
  absl::StatusOr<StartState> s = InferStartState(a, "t.pb");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "t.pb: record 3: MemoryAllocation at address 0xa000, which is still allocated");

  AllocatorRecording b = SizelessFrees();
  b.records.push_back(Rec(false, 4, 0xA000, std::nullopt, 1024, 1280));
  s = InferStartState(b, "t.pb");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "t.pb: record 4: MemoryDeallocation of address 0xa000, which the recording allocated and already "
            "freed");

  AllocatorRecording c = SizelessFrees();
  c.records[0].addr.reset();
  s = InferStartState(c, "t.pb");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), "t.pb: record 0: MemoryAllocation without addr");

  // A chunk live since before the recording overlaps another such chunk, or a
  // chunk allocated before its free (both found by fuzz_xplane).
  AllocatorRecording d = SizelessFrees();
  d.records.push_back(Rec(false, 4, 0x9F80, std::nullopt, 512, 1792));
  s = InferStartState(d, "t.pb");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "t.pb: record 4: MemoryDeallocation of address 0x9f80, inside the chunk at 0x9f00 that record 1 "
            "frees");
  AllocatorRecording e = SizelessFrees();
  e.records.push_back(Rec(false, 4, 0xA900, std::nullopt, 256, 2048));
  s = InferStartState(e, "t.pb");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "t.pb: record 3: MemoryAllocation at address 0xa800 overlaps the chunk at 0xa900, live since before "
            "the recording until record 4 frees it");
}

}  // namespace
}  // namespace hbmsim::trace::xplane
