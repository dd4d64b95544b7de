// A snapshot's device traces as hbmsim events: ids per alloc, frees mapped by
// address, tolerated gaps, oom entries, side information, the start state.
#include "trace/torch/snapshot_events.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "trace/torch/initial_state.h"
#include "trace/torch/snapshot.h"

namespace hbmsim {
namespace {

const std::string kSnapshots = std::string(HBMSIM_SHARED_DIR) + "/torch_snapshots/";

std::unique_ptr<SnapshotEventReader> MustOpen(const std::string& name, std::optional<DeviceId> d = {}) {
  auto r = SnapshotEventReader::OpenDevice(kSnapshots + name, d);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : nullptr;
}

// "alloc 1 2097152 addr=... tag=..." per event, for exact asserts.
std::vector<std::string> ReadAll(EventReader& r) {
  std::vector<std::string> out;
  Event e;
  while (true) {
    absl::StatusOr<bool> more = r.Next(e);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    std::string line = std::string(EventKindName(e.kind));
    if (e.kind == EventKind::kMark) {
      line += " " + std::string(e.label);
    } else {
      line += " " + std::to_string(e.id);
    }
    if (e.kind == EventKind::kAlloc) line += " " + std::to_string(e.bytes.value());
    if (e.addr) line += " addr=" + std::to_string(*e.addr);
    if (!e.tag.empty()) line += " tag=" + std::string(e.tag);
    out.push_back(line);
  }
  return out;
}

std::map<std::string, int> CountKinds(const std::vector<std::string>& events) {
  std::map<std::string, int> n;
  for (const std::string& e : events) ++n[e.substr(0, e.find(' '))];
  return n;
}

TEST(SnapshotEventsTest, SmallTraceIsOneEventPerEntryFromAnEmptyStart) {
  auto r = MustOpen("small_trace_from_empty.pickle");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->Start(0).segments, 0u);
  const std::vector<std::string> events = ReadAll(*r);
  ASSERT_EQ(events.size(), 97u);
  EXPECT_EQ(events[0], "mark segment_alloc:addr=0x7f217a600000,size=20971520");
  EXPECT_EQ(events[1], "alloc 1 2097152 addr=139781763760128");
  const std::map<std::string, int> want{
      {"alloc", 36}, {"free_completed", 26}, {"free_requested", 26}, {"mark", 9}};
  EXPECT_EQ(CountKinds(events), want);
  // The 536870912-byte block freed at entry 9 is id 4 (the 4th alloc).
  EXPECT_EQ(events[9], "free_requested 4");
  EXPECT_EQ(events[10], "free_completed 4");
}

TEST(SnapshotEventsTest, BlocksLiveAtTheStartComeFirstAsPreexistingAllocs) {
  auto r = MustOpen("gen5_user_metadata_compile_context.pickle");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->Start(0).segments, 96u);
  EXPECT_EQ(r->Start(0).live_blocks, 447u);
  const std::vector<StartSegment> segs = r->StartSegments(0);
  ASSERT_EQ(segs.size(), 96u);
  EXPECT_EQ(segs[0].blocks[0].id, segs[0].blocks[0].live ? 1u : 0u);
  const std::vector<std::string> events = ReadAll(*r);
  EXPECT_EQ(events.size(), 447u + 2162 * 3);
  EXPECT_NE(events[0].find(" tag=preexisting"), std::string::npos) << events[0];
  EXPECT_NE(events[446].find(" tag=preexisting"), std::string::npos);
  EXPECT_EQ(events[447].find("alloc 448 "), 0u) << events[222];
  const std::map<std::string, int> want{
      {"alloc", 447 + 2162}, {"free_completed", 2162}, {"free_requested", 2162}};
  EXPECT_EQ(CountKinds(events), want);
}

// Readers of one snapshot share its start states (InitialStateCache): the
// walk runs once, and a reader over the shared state reads what a reader of
// its own does, event for event.
TEST(SnapshotEventsTest, ReadersSharingTheStartStatesReadTheSameEvents) {
  absl::StatusOr<Snapshot> loaded = LoadSnapshotFile(kSnapshots + "gen5_user_metadata_compile_context.pickle");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  auto snap = std::make_shared<const Snapshot>(*std::move(loaded));
  auto starts = std::make_shared<InitialStateCache>();
  const std::shared_ptr<const InitialState> first = starts->Of(*snap, DeviceId(0));
  EXPECT_EQ(starts->Of(*snap, DeviceId(0)), first);  // the same walk, not a second one
  EXPECT_EQ(first->live_blocks, 447u);
  EXPECT_EQ(first->segments.size(), 96u);
  SnapshotEventReader shared_a(snap, {DeviceId(0)}, starts);
  SnapshotEventReader shared_b(snap, {DeviceId(0)}, starts);
  SnapshotEventReader own(snap, {DeviceId(0)});
  EXPECT_EQ(shared_a.Start(0).live_blocks, 447u);
  const std::vector<std::string> events = ReadAll(own);
  EXPECT_EQ(events.size(), 447u + 2162 * 3);
  EXPECT_EQ(ReadAll(shared_a), events);
  EXPECT_EQ(ReadAll(shared_b), events);
}

TEST(SnapshotEventsTest, AFileWithoutATraceForTheDeviceSaysWhichHaveOne) {
  auto none = SnapshotEventReader::OpenDevice(kSnapshots + "empty_4dev_expandable_maxsplit64.pickle", {});
  EXPECT_EQ(none.status().message(),
            kSnapshots +
                "empty_4dev_expandable_maxsplit64.pickle: no trace for device 0 (devices with traces: none)");
  auto dev3 =
      SnapshotEventReader::OpenDevice(kSnapshots + "h100x4_expandable_segments_oom.pickle", DeviceId(3));
  EXPECT_EQ(
      dev3.status().message(),
      kSnapshots +
          "h100x4_expandable_segments_oom.pickle: no trace for device 3 (devices with traces: 0, 1, 2)");
}

// Reserved at the oom entry (maps − unmaps from an empty start) + device_free.
TEST(SnapshotEventsTest, TheRecordedOomImpliesTheCapacity) {
  auto r = MustOpen("h100x4_expandable_segments_oom.pickle", DeviceId(1));
  ASSERT_NE(r, nullptr);
  const std::optional<OomCapacity> c = r->CapacityAtFirstOom(0);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->entry, 421u);
  EXPECT_EQ(c->reserved, Bytes(84202749952));
  EXPECT_EQ(c->device_free, Bytes(95682560));
  EXPECT_EQ(c->capacity, Bytes(84298432512));
  const std::vector<std::string> events = ReadAll(*r);
  EXPECT_EQ(events[421], "alloc 200 5308694528 tag=oom");  // after the 199 allocs before it
  EXPECT_EQ(events[422], "free 200");
  EXPECT_FALSE(MustOpen("small_trace_from_empty.pickle")->CapacityAtFirstOom(0).has_value());
}

// A hand-built trace with the gaps real recordings have.
TEST(SnapshotEventsTest, MissingFreeRequestedAndUnknownAddressesAreTolerated) {
  auto snap = std::make_shared<Snapshot>();
  snap->file_name = "hand.pickle";
  DeviceTrace& t = snap->device_traces.emplace_back();
  const auto entry = [&](TraceAction a, uint64_t addr, uint64_t size) {
    TraceEntry e;
    e.action = a;
    e.addr = Offset(addr);
    e.size = Bytes(size);
    t.entries.push_back(e);
  };
  entry(TraceAction::kAlloc, 4096, 100);
  entry(TraceAction::kFreeCompleted, 4096, 100);  // no free_requested before it
  entry(TraceAction::kFreeRequested, 8192, 100);  // nothing live there
  entry(TraceAction::kSegmentFree, 0, 2097152);
  SnapshotEventReader r(snap, {DeviceId(0)});
  const std::vector<std::string> want{"alloc 1 100 addr=4096", "free 1",
                                      "mark unmatched_free_requested:addr=0x2000,size=100",
                                      "mark segment_free:addr=0x0,size=2097152"};
  EXPECT_EQ(ReadAll(r), want);
  EXPECT_EQ(r.Location(), "hand.pickle: end");
}

TEST(SnapshotEventsTest, SegmentEntriesAreSideInformation) {
  auto r = MustOpen("small_trace_from_empty.pickle");
  Event e;
  ASSERT_TRUE(*r->Next(e));
  const std::optional<SideEntry> side = r->current_side();
  ASSERT_TRUE(side.has_value());
  EXPECT_EQ(side->action, SideAction::kSegmentAlloc);
  EXPECT_EQ(side->addr, 139781763760128u);
  EXPECT_EQ(side->size, 20971520u);
  EXPECT_EQ(r->Location(), kSnapshots + "small_trace_from_empty.pickle: device_traces[0][0]");
  ASSERT_TRUE(*r->Next(e));
  EXPECT_FALSE(r->current_side().has_value());  // an alloc is an event, not side information
}

}  // namespace
}  // namespace hbmsim
