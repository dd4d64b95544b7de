// XLA's own assignment beside offline's packing (trace/xla/assignment_compare.h):
// a case worked by hand, and both orders of rules on it.
#include "trace/xla/assignment_compare.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace hbmsim::trace::xla {
namespace {

// A parameter, and a temp allocation holding a tuple index table t{} and
// three arrays a (400 B, live 1-3), b (400 B, 2-4), c (300 B, 4-5), placed as
// XLA would (alignment 128):
//   t{} is tuple-shaped: its own allocation, first in the combined temp, at 0;
//   the heap starts at RoundUp(16) = 128.
//   Heap-simulator times, values by (start, end, id): a alloc 0, b alloc 1,
//   a free 2, c alloc 3, b free 4, c free 5: a [0,2], b [1,4], c [3,5].
//   Spatial: a and b are 400 B; b lives 3 steps, a 2: b@0, a overlaps b ->
//   RoundUp(400) = 512, c overlaps b only -> 512. Heap 912; the temp
//   allocation is 128 + 912 = 1040. (Schedule times would tie a and b at 3.)
constexpr std::string_view kDump = R"(BufferAssignment:
allocation 0: size 64, parameter 0, shape |f32[16]| at ShapeIndex {}:
 value: <0 p0 @0> (size=64,offset=0): f32[16]{0}
allocation 1: size 1040, preallocated-temp:
 value: <1 t{} @0> (size=16,offset=0): (f32[100]{0}, f32[100]{0})
 value: <2 a @0> (size=400,offset=640): f32[100]{0}
 value: <3 b @0> (size=400,offset=128): f32[100]{0}
 value: <4 c @0> (size=300,offset=640): f32[75]{0}

Total bytes used: 1104 (1.1KiB)
)";

constexpr std::string_view kRanges = R"(HloLiveRange (max 5):
  BufferLiveRange:
    p0{}:0-5
    t{}:0-5
    a{}:1-3
    b{}:2-4
    c{}:4-5
)";

AssignmentComparison Compare(const CompareRules& rules) {
  absl::StatusOr<BufferAssignmentText> a = ParseBufferAssignmentText(kDump, "d.txt");
  absl::StatusOr<LiveRanges> r = ParseLiveRangeText(kRanges, "d.txt");
  EXPECT_TRUE(a.ok() && r.ok());
  EXPECT_EQ(InferAlignment(*a, 1), 128u);
  return CompareAssignment(*a, *r, rules);
}

TEST(AssignmentCompare, XlaRulesReproduceTheHandWorkedAssignment) {
  const AssignmentComparison c = Compare(CompareRules{});
  ASSERT_EQ(c.allocations.size(), 1u);
  const AllocationComparison& t = c.allocations[0];
  EXPECT_EQ(t.kind, "preallocated-temp");
  EXPECT_EQ(t.xla_size, 1040u);
  EXPECT_EQ(t.offline_size, 1040u);
  EXPECT_EQ(t.matched, 4u);
  EXPECT_EQ(t.tuple_tables, 1u);
  EXPECT_EQ(t.heap_base, 128u);
  EXPECT_EQ(t.differing.size(), 0u);
  ASSERT_EQ(c.single_value_kinds.size(), 1u);
  EXPECT_EQ(c.single_value_kinds[0], (std::pair<std::string, size_t>{"parameter", 1}));
  const std::vector<std::string> lines = ExplainAssignment(c);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1],
            "  allocation 1 (preallocated-temp): XLA 1040 B, offline 1040 B (+0 B); 4 of 4 values at XLA's "
            "offset (1116 of 1116 B); 1 tuple index tables in their own allocations first, the heap from "
            "offset 128 (spatial order)");
  EXPECT_EQ(lines[2], "  the other 1 allocations hold one value each, at offset 0: 1 parameter");
}

// hbmsim's own rules (sizes rounded to 256, ties by earlier start, the tuple
// table in the heap): times t [0,6], a [1,3], b [2,5], c [4,7] (t frees at 6,
// c at 7); every size but t's is 512. Spatial: b and c live 4, b starts
// first: b@0, c@512, a@512, t above all @1024: heap 1280. Not one offset of XLA's.
TEST(AssignmentCompare, HbmsimRulesMissEveryOffset) {
  CompareRules before;
  before.rules = PlannerRules::kHbmsim;
  before.alignment = 256;
  before.tuples_apart = false;
  const AssignmentComparison c = Compare(before);
  const AllocationComparison& t = c.allocations[0];
  EXPECT_EQ(t.offline_size, 1280u);
  EXPECT_EQ(t.matched, 0u);
  ASSERT_EQ(t.differing.size(), 4u);
  EXPECT_EQ(t.differing[0].name, "t{}");
  EXPECT_EQ(t.differing[0].offline_offset, 1024u);
  EXPECT_EQ(t.differing[1].name, "b");
  EXPECT_EQ(t.differing[1].offline_offset, 0u);
  EXPECT_EQ(t.differing[2].name, "a");
  EXPECT_EQ(t.differing[2].offline_offset, 512u);
}

// The shared real dumps: the "before" of docs/formats/xla.md (hbmsim's rules,
// 256-aligned, tuple tables in the heap) against XLA's rules.
AllocationComparison TempOf(const std::string& file, const CompareRules& rules) {
  std::ifstream in(std::string(HBMSIM_SOURCE_DIR) + "/../shared/xla_dumps/" + file);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  absl::StatusOr<BufferAssignmentText> a = ParseBufferAssignmentText(s, file);
  EXPECT_TRUE(a.ok()) << file;
  absl::StatusOr<LiveRanges> r = ParseLiveRangeText(*a->live_range_text, file, a->live_range_first_line);
  EXPECT_TRUE(r.ok());
  for (const AllocationComparison& c : CompareAssignment(*a, *r, rules).allocations) {
    if (c.kind == "preallocated-temp") return c;
  }
  return {};
}

TEST(AssignmentCompare, SharedDumpsBeforeAndAfter) {
  const std::string reshard = "module_0001.jit_reshard_xfirst.sm_8.0_gpu_after_optimizations-buffer-assignment.txt";
  const std::string kernel = "module_0179.jit__kernel.sm_8.0_gpu_after_optimizations-buffer-assignment.txt";
  CompareRules before;
  before.rules = PlannerRules::kHbmsim;
  before.alignment = 256;
  before.tuples_apart = false;
  const AllocationComparison rb = TempOf(reshard, before), kb = TempOf(kernel, before);
  EXPECT_EQ(rb.offline_size, 2095055360u);
  EXPECT_EQ(rb.matched, 0u);
  EXPECT_EQ(kb.offline_size, 3229286912u);
  EXPECT_EQ(kb.matched, 0u);
  const AllocationComparison ra = TempOf(reshard, CompareRules{}), ka = TempOf(kernel, CompareRules{});
  EXPECT_EQ(ra.offline_size, 2095055232u);
  EXPECT_EQ(ra.matched, 6u);
  EXPECT_EQ(ka.offline_size, 3229288576u);
  EXPECT_EQ(ka.matched, 56u);
  EXPECT_EQ(ka.values, 56u);
}

}  // namespace
}  // namespace hbmsim::trace::xla
