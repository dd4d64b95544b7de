// The replay engine makes no heap allocation per event once the trace's live
// set has been seen: a long alloc/free workload through the real BFC policy,
// with the report recorder and the placements writer attached, allocates
// nothing after a warm-up. operator new is counted for the whole binary, which
// is why this test has a binary of its own.
#include <cstdlib>
#include <new>
#include <vector>

#include "allocator/bfc/bfc_allocator.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "sim/engine/replay_engine.h"
#include "sim/report/placements_writer.h"
#include "sim/report/replay_recorder.h"
#include "tests/common/heap_counter.h"

namespace hbmsim {
namespace {

// Events built up front; Next() only copies one. It notes the allocation count
// when the warm-up ends and when the trace ends.
class PrebuiltReader : public EventReader {
 public:
  PrebuiltReader(std::vector<Event> events, size_t warmup) : events_(std::move(events)), warmup_(warmup) {}
  absl::StatusOr<bool> Next(Event& e) override {
    if (pos_ == warmup_) news_after_warmup_ = testing::HeapAllocationCount();
    if (pos_ == events_.size()) {
      news_at_end_ = testing::HeapAllocationCount();
      return false;
    }
    e = events_[pos_++];
    return true;
  }
  const TraceMetadata& metadata() const override { return metadata_; }
  std::string Location() const override { return "prebuilt"; }

  uint64_t news_after_warmup_ = 0;
  uint64_t news_at_end_ = 0;

 private:
  std::vector<Event> events_;
  size_t warmup_;
  size_t pos_ = 0;
  TraceMetadata metadata_;
};

// A sliding window of 64 live buffers of varied sizes: alloc i, free i-64.
std::vector<Event> SlidingWindow(uint64_t allocs) {
  std::vector<Event> events;
  for (uint64_t i = 0; i < allocs; ++i) {
    Event a;
    a.kind = EventKind::kAlloc;
    a.id = i;
    a.bytes = Bytes(((i * 2654435761u) % 4096 + 1) * 1024);
    events.push_back(a);
    if (i >= 64) {
      Event f;
      f.kind = EventKind::kFree;
      f.id = i - 64;
      events.push_back(f);
    }
  }
  return events;
}

TEST(SteadyStateTest, ReplayAllocatesNothingPerEventAfterWarmup) {
  BfcOptions options;
  options.memory_limit = Bytes::GiB(1);
  BfcAllocator bfc(options);
  auto out = io::OutputFile::Create("/dev/null");
  ASSERT_TRUE(out.ok());
  PlacementsWriter writer(**out);
  ReplayRecorder recorder(bfc, *BuiltinPolicies().Find("bfc"));
  ReplayEngine engine(bfc, {});
  engine.AddObserver(&recorder);
  engine.AddObserver(&writer);
  PrebuiltReader reader(SlidingWindow(50000), /*warmup=*/20000);
  absl::StatusOr<ReplaySummary> s = engine.Run(reader);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->failures, 0u);
  EXPECT_EQ(s->events_read, 50000u + 50000u - 64u);
  EXPECT_GT(reader.news_after_warmup_, 0u);  // the counter does count (maps, chunks)
  EXPECT_EQ(reader.news_at_end_ - reader.news_after_warmup_, 0u);
  EXPECT_TRUE(writer.Finish().ok());
  EXPECT_TRUE((*out)->Commit().ok());
}

}  // namespace
}  // namespace hbmsim
