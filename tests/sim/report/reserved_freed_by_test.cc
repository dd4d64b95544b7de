// Reserved, explained: which frees left the cached bytes free (issue 46,
// item 1), worked by hand on short traces replayed through PyTorch's caching
// allocator and BFC. Labels are the tags (no user frames). Sizes in MiB.
//
// torch, one 20 MiB segment (4 MiB requests take a 20 MiB segment and split it):
//   event  line                 blocks after it
//   0      alloc 1 4 tag=act.a  [0,4) 1 | [4,20) free (split off, never used)
//   1      alloc 2 4 tag=act.b  [4,8) 2
//   2      alloc 3 4 tag=act.a  [8,12) 3
//   3      alloc 4 4 tag=keep   [12,16) 4 | [16,20) free
//   4      free 1               [0,4) freed by act.a at 4
//   5      free 2               [0,8) free: [4,8) by act.b at 5
//   6      free 3               [0,12) free: [8,12) by act.a at 6
// At the end 16 MiB are inactive_split in 2 blocks (4 stays live): act.a
// freed 8 MiB (1 block, 2 frees), act.b 4 MiB (1 block, 1 free), and the
// tail [16,20) was never freed (1 block, no free).
#include <algorithm>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "sim/config/allocator_config.h"
#include "sim/engine/replay_engine.h"
#include "sim/report/reserved_explained.h"
#include "trace/formats/format_table.h"

namespace hbmsim {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;

std::string Mib(uint64_t n) { return std::to_string(n * kMiB); }

const std::string kSplitByFrees = fmt::format(
    "alloc 1 {0} tag=act.a\nalloc 2 {0} tag=act.b\nalloc 3 {0} tag=act.a\nalloc 4 {0} tag=keep\n"
    "free 1\nfree 2\nfree 3\n",
    Mib(4));

// Replays `trace` under `policy` with `sets` and returns the end, explained.
ReservedMoment ExplainEnd(const std::string& trace, const std::string& policy,
                          const std::vector<std::string>& sets = {}, size_t* freed_ranges = nullptr) {
  const std::string path = ::testing::TempDir() + "/reserved_freed_by_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".trace";
  std::ofstream(path, std::ios::binary) << trace;
  absl::StatusOr<std::unique_ptr<EventReader>> reader = OpenTrace(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  AllocatorConfig config = DefaultConfig(*BuiltinPolicies().Find(policy));
  for (const std::string& set : sets) EXPECT_TRUE(ApplySetOption(config, set).ok()) << set;
  absl::StatusOr<std::unique_ptr<Allocator>> a = BuildAllocator(config, Bytes(1024 * kMiB));
  EXPECT_TRUE(a.ok()) << a.status();
  if (!reader.ok() || !a.ok()) return {};
  ReplayEngine engine(**a, ReplayOptions{});
  ReservedExplainer explainer(**a, nullptr);
  engine.AddObserver(&explainer);
  absl::StatusOr<ReplaySummary> summary = engine.Run(**reader);
  EXPECT_TRUE(summary.ok()) << summary.status().message();
  explainer.Finish(EventIndex(summary.ok() ? summary->events_read : 0));
  if (freed_ranges != nullptr) *freed_ranges = explainer.freed_ranges();
  return *explainer.end();
}

// "label bytes/blocks/frees; ..." of a part's freed_by, bytes in MiB.
std::string FreedByText(const ExplainedPart& p) {
  std::string out;
  for (const FreedBy& f : p.freed_by) {
    out += fmt::format("{}{} {}/{}/{}", out.empty() ? "" : "; ", f.label, f.bytes.value() / kMiB, f.blocks,
                       f.frees);
  }
  return out;
}

const ExplainedPart* FindPart(const ReservedMoment& m, std::string_view cause) {
  for (const ExplainedPart& p : m.parts) {
    if (p.cause == cause) return &p;
  }
  ADD_FAILURE() << "no part " << cause;
  return nullptr;
}

// "begin-end:event" of every record inside [0, 1000).
std::string RecordsText(const FreedRanges& r) {
  std::string out;
  for (const FreedRanges::Run& run : r.RunsIn(Offset(0), Bytes(1000))) {
    out += fmt::format("{}{}-{}:{}", out.empty() ? "" : " ", run.begin, run.end, run.who.event.value());
  }
  return out;
}

TEST(FreedRangesTest, ForgetTrimsRecordsPartlyInsideAndSplitsOneAroundIt) {
  FreedRanges r;
  r.Freed(Offset(100), Bytes(100), {EventIndex(1), 1, 0});
  r.Freed(Offset(200), Bytes(100), {EventIndex(2), 2, 0});
  r.Freed(Offset(400), Bytes(100), {EventIndex(3), 3, 0});
  EXPECT_EQ(RecordsText(r), "100-200:1 200-300:2 400-500:3");
  r.Forget(Offset(150), Bytes(100));  // the top of the first, the bottom of the second
  EXPECT_EQ(RecordsText(r), "100-150:1 250-300:2 400-500:3");
  r.Forget(Offset(420), Bytes(30));  // inside the third: two pieces stay
  EXPECT_EQ(RecordsText(r), "100-150:1 250-300:2 400-420:3 450-500:3");
  r.Freed(Offset(120), Bytes(150), {EventIndex(4), 4, 0});  // a free over stale records replaces them
  EXPECT_EQ(RecordsText(r), "100-120:1 120-270:4 270-300:2 400-420:3 450-500:3");
  EXPECT_EQ(r.size(), 5u);
  // A query clips the runs to its range.
  const std::vector<FreedRanges::Run> runs = r.RunsIn(Offset(110), Bytes(300));
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs.front().begin, 110u);
  EXPECT_EQ(runs.back().end, 410u);
  r.Forget(Offset(0), Bytes(1000));
  EXPECT_EQ(r.size(), 0u);
}

// The records against a model that keeps, for every byte of [0, 512), the
// event of the free that left it free (0: none): over 100,000 seeded random
// frees and forgets, read after each of the first 500 and then after every
// 97th, the runs of equal events are the records, and a query of any range
// is the model's bytes in it.
TEST(FreedRangesTest, AgreesWithAByteModelOverRandomFreesAndForgets) {
  constexpr uint64_t kSpan = 512;
  std::mt19937_64 random(20261130);
  FreedRanges r;
  std::vector<uint64_t> model(kSpan, 0);
  const auto model_runs = [&](uint64_t begin, uint64_t end) {
    std::string out;
    for (uint64_t b = begin; b < end;) {
      uint64_t e = b + 1;
      while (e < end && model[e] == model[b]) ++e;
      if (model[b] != 0) out += fmt::format("{}{}-{}:{}", out.empty() ? "" : " ", b, e, model[b]);
      b = e;
    }
    return out;
  };
  const auto record_runs = [&](uint64_t begin, uint64_t end) {
    std::string out;
    for (const FreedRanges::Run& run : r.RunsIn(Offset(begin), Bytes(end - begin))) {
      out += fmt::format("{}{}-{}:{}", out.empty() ? "" : " ", run.begin, run.end, run.who.event.value());
    }
    return out;
  };
  for (uint64_t event = 1; event <= 100000; ++event) {
    const uint64_t begin = random() % kSpan;
    const uint64_t size = 1 + random() % std::min<uint64_t>(96, kSpan - begin);
    const bool free = random() % 2 == 0;
    if (free) {
      r.Freed(Offset(begin), Bytes(size), {EventIndex(event), event, 0});
    } else {
      r.Forget(Offset(begin), Bytes(size));
    }
    std::fill(model.begin() + begin, model.begin() + begin + size, free ? event : 0);
    // Read after every note at first, then after runs of 97 notes, so that many
    // trims and splits between two reads are checked together as well.
    if (event > 500 && event % 97 != 0) continue;
    ASSERT_EQ(record_runs(0, kSpan), model_runs(0, kSpan)) << "after event " << event;
    const uint64_t q = random() % kSpan;
    const uint64_t q_end = q + 1 + random() % (kSpan - q);
    ASSERT_EQ(record_runs(q, q_end), model_runs(q, q_end)) << "query [" << q << ", " << q_end << ")";
  }
}

TEST(ReservedFreedByTest, InactiveSplitByTheFreesThatSplitIt) {
  const ReservedMoment end = ExplainEnd(kSplitByFrees, "torch");
  EXPECT_EQ(end.reserved, Bytes(20 * kMiB));
  EXPECT_EQ(end.Sum(), end.reserved);
  const ExplainedPart* split = FindPart(end, "inactive_split");
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->bytes, Bytes(16 * kMiB));
  EXPECT_EQ(split->blocks, 2u);
  EXPECT_EQ(FreedByText(*split), "act.a 8/1/2; (not freed in the trace) 4/1/0; act.b 4/1/1");
  // Live and rounding parts are no free blocks: nobody freed them.
  EXPECT_TRUE(FindPart(end, "requested")->freed_by.empty());
  // The largest cached block, [0,12), was made by three frees, the last free 3 at event 6.
  ASSERT_EQ(end.largest_cached.size(), 2u);
  const CachedBlockExplained& first = end.largest_cached[0];
  EXPECT_EQ(first.block.size, Bytes(12 * kMiB));
  ASSERT_TRUE(first.freed_by.has_value());
  EXPECT_EQ(first.freed_by->event, EventIndex(6));
  EXPECT_EQ(first.freed_by->id, 3u);
  EXPECT_EQ(first.freed_by->label, "act.a");
  EXPECT_EQ(first.freed_by->frees, 3u);
  EXPECT_EQ(first.freed_by->bytes, Bytes(12 * kMiB));
  EXPECT_FALSE(end.largest_cached[1].freed_by.has_value());  // the tail nobody used
}

// An alloc over freed bytes ends their records: 6 MiB best-fits [0,12) and
// takes [0,6), all of act.a's first 4 MiB and half of act.b's; what stays
// free of [6,12) is act.b's [6,8) and act.a's [8,12).
TEST(ReservedFreedByTest, AnAllocOverFreedBytesEndsTheirRecords) {
  const ReservedMoment end = ExplainEnd(kSplitByFrees + "alloc 5 " + Mib(6) + " tag=new\n", "torch");
  const ExplainedPart* split = FindPart(end, "inactive_split");
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->bytes, Bytes(10 * kMiB));
  // Ties of bytes fall to the label: "(" sorts before the letters.
  EXPECT_EQ(FreedByText(*split), "(not freed in the trace) 4/1/0; act.a 4/1/1; act.b 2/1/1");
}

// A buffer allocated and freed a thousand times over the same bytes leaves one
// record, not a thousand: records live only as long as their bytes stay free.
TEST(ReservedFreedByTest, RecordsDoNotGrowWithTheNumberOfFrees) {
  std::string trace = "alloc 1 " + Mib(4) + " tag=keep\n";
  for (int i = 0; i < 1000; ++i) trace += fmt::format("alloc {0} {1} tag=loop\nfree {0}\n", 100 + i, Mib(4));
  size_t records = 0;
  const ReservedMoment end = ExplainEnd(trace, "torch", {}, &records);
  EXPECT_EQ(records, 1u);
  EXPECT_EQ(FreedByText(*FindPart(end, "inactive_split")), "(not freed in the trace) 12/1/0; loop 4/1/1");
  EXPECT_EQ(end.largest_cached[0].freed_by->event, EventIndex(2000));
}

// empty_cache() gives the whole segment back, so its records end with it; a
// new segment at the same address starts with none.
TEST(ReservedFreedByTest, ReleasedSegmentsTakeTheirRecordsAlong) {
  // 1010 MiB cannot fit beside the cached 20 MiB segment under the 1 GiB limit:
  // the OOM retry frees the cache (empty_cache) and cudaMallocs again.
  const std::string trace = kSplitByFrees + "free 4\nalloc 9 " + Mib(1010) + " tag=big\nfree 9\n";
  size_t records = 0;
  const ReservedMoment end = ExplainEnd(trace, "torch", {}, &records);
  EXPECT_EQ(records, 1u);  // big's 1010 MiB, freed at event 9
  EXPECT_EQ(end.reserved, Bytes(1010 * kMiB));
  EXPECT_EQ(FreedByText(*FindPart(end, "free_segment")), "big 1010/1/1");
  EXPECT_EQ(end.largest_cached[0].freed_by->event, EventIndex(9));
}

// BFC without growth holds one 1 GiB region. a, b and keep take [0,64),
// [64,128) and [128,192); a and b freed merge into the chunk [0,128); then c
// (32 MiB) best-fits it and takes [0,32), leaving the free chunk [32,128) of
// 96 MiB (bin floor(log2(96 MiB / 256)) = 18): 32 MiB that a freed and 64 MiB
// that b freed. The region's top [192,1024) was split off and never used.
TEST(ReservedFreedByTest, BfcFreeChunksByWhoFreedThem) {
  const std::string trace = fmt::format(
      "alloc 1 {0} tag=a\nalloc 2 {0} tag=b\nalloc 3 {0} tag=keep\nfree 1\nfree 2\nalloc 4 {1} tag=c\n",
      Mib(64), Mib(32));
  const ReservedMoment end = ExplainEnd(trace, "bfc");
  EXPECT_EQ(end.reserved, Bytes(1024 * kMiB));
  const ExplainedPart* chunk = FindPart(end, "free_chunk");
  ASSERT_NE(chunk, nullptr);
  EXPECT_EQ(chunk->key, "bin 18");
  EXPECT_EQ(chunk->bytes, Bytes(96 * kMiB));
  EXPECT_EQ(FreedByText(*chunk), "b 64/1/1; a 32/1/1");
  EXPECT_EQ(FreedByText(*FindPart(end, "region_tail")), "(not freed in the trace) 832/1/0");
  // The chunk's last free was b's, at event 4; two frees made it.
  const CachedBlockExplained& c = end.largest_cached[1];
  ASSERT_EQ(c.block.size, Bytes(96 * kMiB));
  ASSERT_TRUE(c.freed_by.has_value());
  EXPECT_EQ(c.freed_by->event, EventIndex(4));
  EXPECT_EQ(c.freed_by->label, "b");
  EXPECT_EQ(c.freed_by->frees, 2u);
  EXPECT_EQ(c.freed_by->bytes, Bytes(96 * kMiB));
}

// Expandable segments, mixed pages (tests/allocator/core/reserved_parts_torch_test.cc's
// TorchExpandableMixedPages): y's free leaves [3,43) free, page 1 whole
// between 17 MiB of page 0 and 3 MiB of page 2; [46,60), beside z, was split
// off and never used. Each cause names y for the bytes it freed.
TEST(ReservedFreedByTest, ExpandablePagesByWhoFreedThem) {
  const std::string trace =
      fmt::format("alloc 1 {} tag=x\nalloc 2 {} tag=y\nalloc 3 {} tag=z\nfree 2\n", Mib(3), Mib(40), Mib(3));
  const ReservedMoment end = ExplainEnd(trace, "torch", {"expandable_segments=true"});
  EXPECT_EQ(end.reserved, Bytes(60 * kMiB));
  EXPECT_EQ(end.Sum(), end.reserved);
  const ExplainedPart* partial = FindPart(end, "expandable_partial_page");
  const ExplainedPart* whole = FindPart(end, "expandable_free");
  ASSERT_TRUE(partial != nullptr && whole != nullptr);
  EXPECT_EQ(partial->bytes, Bytes(34 * kMiB));
  EXPECT_EQ(partial->blocks, 2u);
  EXPECT_EQ(FreedByText(*partial), "y 20/1/1; (not freed in the trace) 14/1/0");
  EXPECT_EQ(whole->bytes, Bytes(20 * kMiB));
  EXPECT_EQ(FreedByText(*whole), "y 20/1/1");
  // The JSON: the mixed block names its whole page and its freer.
  const nlohmann::ordered_json j = ReservedMomentJson(end);
  const nlohmann::ordered_json& block = j["largest_cached"][0];
  EXPECT_EQ(block["size"], 40 * kMiB);
  EXPECT_EQ(block["cause"], "expandable_partial_page");
  EXPECT_EQ(block["inner"]["cause"], "expandable_free");
  EXPECT_EQ(block["inner"]["bytes"], 20 * kMiB);
  EXPECT_EQ(block["inner"]["offset"].get<uint64_t>() - block["offset"].get<uint64_t>(), 17 * kMiB);
  EXPECT_EQ(
      block["freed_by"],
      nlohmann::ordered_json({{"event", 3}, {"id", 2}, {"label", "y"}, {"frees", 1}, {"bytes", 40 * kMiB}}));
}

// The text lists the freeing labels under their part, and the largest cached
// block's last free beside its creator.
TEST(ReservedFreedByTest, TextListsTheFreesUnderTheirPart) {
  const std::string text = RenderReservedMomentText("at the end", ExplainEnd(kSplitByFrees, "torch"));
  EXPECT_NE(
      text.find(
          "            16777216   16.00MiB   80.0%       2  inactive_split  large pool\n"
          "             8388608    8.00MiB               1    freed by act.a (2 frees)\n"
          "             4194304    4.00MiB               1    never freed in the trace (split off unused, or "
          "free from the start)\n"
          "             4194304    4.00MiB               1    freed by act.b (1 free)\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("inactive_split (large pool) at 0x"), std::string::npos) << text;
  EXPECT_NE(
      text.find("; its region obtained for event 0 (id 1, act.a); 12.00MiB of it freed by 3 frees, the last "
                "at event 6 (id 3, act.a)\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("; its region obtained for event 0 (id 1, act.a); none of it freed in the trace\n"),
            std::string::npos)
      << text;
}

// More than four labels: past the third, on one line, bytes and frees
// summed, no block count (one block can hold the bytes of several labels).
// l1..l4 take [0,16) of a 20 MiB segment, keep (2 MiB) best-fits [16,20) and
// splits it; l1..l4 freed leave [0,16) and the unused [18,20): 18 MiB in 2
// blocks, 4 MiB by each label (ties by label) and 2 MiB never freed; the
// last two are summed: 6 MiB, 1 free. With l4 kept live, four rows: all shown.
TEST(ReservedFreedByTest, TextSumsTheLabelsPastTheThird) {
  std::string trace;
  for (int i = 1; i <= 4; ++i) trace += fmt::format("alloc {} {} tag=l{}\n", i, Mib(4), i);
  trace += fmt::format("alloc 9 {} tag=keep\n", Mib(2));
  for (int i = 1; i <= 3; ++i) trace += fmt::format("free {}\n", i);
  const std::string text = RenderReservedMomentText("at the end", ExplainEnd(trace + "free 4\n", "torch"));
  EXPECT_NE(
      text.find("            18874368   18.00MiB   90.0%       2  inactive_split  large pool\n"
                "             4194304    4.00MiB               1    freed by l1 (1 free)\n"
                "             4194304    4.00MiB               1    freed by l2 (1 free)\n"
                "             4194304    4.00MiB               1    freed by l3 (1 free)\n"
                "             6291456    6.00MiB                    freed by others (2 labels) (1 free)\n"),
      std::string::npos)
      << text;
  // l4 live: [0,12) and [18,20) free, 14 MiB (70%): l1, l2, l3 and the never-freed 2 MiB, each its own row.
  const std::string four = RenderReservedMomentText("at the end", ExplainEnd(trace, "torch"));
  EXPECT_NE(
      four.find(
          "            14680064   14.00MiB   70.0%       2  inactive_split  large pool\n"
          "             4194304    4.00MiB               1    freed by l1 (1 free)\n"
          "             4194304    4.00MiB               1    freed by l2 (1 free)\n"
          "             4194304    4.00MiB               1    freed by l3 (1 free)\n"
          "             2097152    2.00MiB               1    never freed in the trace (split off unused, "
          "or free from the start)\n"),
      std::string::npos)
      << four;
}

TEST(ReservedFreedByTest, JsonOfAPartNamesItsFreers) {
  const nlohmann::ordered_json j = ReservedMomentJson(ExplainEnd(kSplitByFrees, "torch"));
  nlohmann::ordered_json split;
  for (const auto& p : j["parts"]) {
    if (p["cause"] == "inactive_split") split = p;
  }
  EXPECT_EQ(split["freed_by"], nlohmann::ordered_json::parse(fmt::format(
                                   R"j([{{"label": "act.a", "bytes": {0}, "blocks": 1, "frees": 2}},
                                       {{"label": "(not freed in the trace)", "bytes": {1}, "blocks": 1, "frees": 0}},
                                       {{"label": "act.b", "bytes": {1}, "blocks": 1, "frees": 1}}])j",
                                   8 * kMiB, 4 * kMiB)));
  for (const auto& p : j["parts"]) {
    if (p["cause"] == "requested" || p["cause"] == "rounding") {
      EXPECT_FALSE(p.contains("freed_by")) << p;
    }
  }
}

}  // namespace
}  // namespace hbmsim
