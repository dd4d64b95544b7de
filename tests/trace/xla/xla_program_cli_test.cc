// The shared real XLA dumps (../shared/xla_dumps, the appended-live-range
// layout) as compiled programs: replay runs without --bytes-limit at the
// policy's smallest fitting limit, the 0-byte values are named beside
// num_allocs, and XLA's own peak listing is set beside hbmsim's peak live
// with the difference explained rule by rule.
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::trace::xla {
namespace {

using ::hbmsim::testing::CliRun;
using ::hbmsim::testing::ReadFile;
using ::hbmsim::testing::RunHbmsim;
using ::hbmsim::testing::TempPath;

const std::string kDir = "../shared/xla_dumps/";
const std::string kReshard =
    kDir + "module_0001.jit_reshard_xfirst.sm_8.0_gpu_after_optimizations-buffer-assignment.txt";
const std::string kKernel =
    kDir + "module_0179.jit__kernel.sm_8.0_gpu_after_optimizations-buffer-assignment.txt";

void ExpectLine(const CliRun& r, const std::string& line) {
  EXPECT_NE(r.out.find(line + "\n"), std::string::npos) << line << "\n---\n" << r.out;
}

// module_0001: XLA lists at T = 11 all-to-all.1.1 + param.1 +
// input_transpose_fusion = 1047527424 + 523763712 + 1047527424 = 2618818560 B.
// hbmsim's peak is at time 9: all-to-all.1.1 (8-11), param.1, loop_transpose_fusion
// (5-10) = the same 2618818560 B, plus the tuple tables all-to-all-start{} (16 B)
// and {0} (8 B), live 9-10: 2618818584 B. At T = 11 both count the same values:
// the whole +24 B is the moment.
TEST(XlaProgramCli, ReshardPeakBesideXlasListing) {
  const CliRun r = RunHbmsim("replay " + kReshard + " --allocator tpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectLine(r, "Peak live bytes: 2618818584 B (2.44GiB).");
  ExpectLine(
      r,
      "XLA's own peak listing: 2618818560 B in 3 values live at time 11 (\"Live ranges at 11 (peak)\"); "
      "hbmsim's peak live: 2618818584 B at time 9; difference +24 B");
  EXPECT_NE(r.out.find("  moment +24 B: at time 11 hbmsim holds 2618818560 B;"), std::string::npos) << r.out;
  ExpectLine(r, "  values +0 B at time 11: none (the same values, the same sizes)");
  ExpectLine(
      r,
      "  limit:      2618819608 (2.44GiB) from none given: a compiled program has no device limit; the "
      "smallest limit at which tpu fits it (hbmsim size), 0.00% over its peak live 2618818584 B");
}

// module_0179: XLA lists 15 values at T = 63 summing to 3229287748 B. hbmsim
// holds 3258778916 B then: all-gather-start{1} is 29491200 B (c128[9,320,80,2]
// x ... as assigned) where the listing prints the tuple instruction's 16 B
// index table, and custom-call.50.0{0} is 0 B where it prints 16:
// 29491200 - 16 + 0 - 16 = +29491168. hbmsim's peak, 3258778932 B at time 56,
// is 16 B above its own sum at 63 (the moment). 16 + 29491168 = 29491184.
// Two values are 0 bytes (a token parameter and custom-call.50.0{0}): 86
// allocations replayed, num_allocs 84.
TEST(XlaProgramCli, KernelPeakDifferenceByRuleAndZeroByteValues) {
  const CliRun r = RunHbmsim("replay " + kKernel + " --allocator bfc");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectLine(
      r,
      "XLA's own peak listing: 3229287748 B in 15 values live at time 63 (\"Live ranges at 63 (peak)\"); "
      "hbmsim's peak live: 3258778932 B at time 56; difference +29491184 B");
  EXPECT_NE(r.out.find("  moment +16 B: at time 63 hbmsim holds 3258778916 B;"), std::string::npos) << r.out;
  ExpectLine(r, "  values +29491168 B at time 63:");
  ExpectLine(
      r,
      "    all-gather-start: XLA lists 16 + 16 B, hbmsim 16 + 29491200 B: a tuple-shaped instruction: "
      "XLA's listing sizes each of its values by the instruction's shape (its 16 B index table), not the "
      "value's own bytes");
  ExpectLine(r,
             "    custom-call.50.0: XLA lists 16 + 16 B, hbmsim 0 + 16 B: a tuple-shaped instruction: XLA's "
             "listing sizes each of its values by the instruction's shape (its 16 B index table), not the "
             "value's own bytes");
  ExpectLine(r, "  outcome:    0 of 86 allocations failed (0 oom, 0 fragmentation)");
  ExpectLine(r,
             "              2 of them asked for 0 bytes: they take no memory and get no block, so the "
             "allocator's num_allocs does not count them");
  ExpectLine(r, "NumAllocs:                          84");
  ExpectLine(
      r,
      "  limit:      4843237428 (4.51GiB) from none given: a compiled program has no device limit; the "
      "smallest limit at which bfc fits it (hbmsim size), 48.62% over its peak live 3258778932 B");
}

// offline packs the kernel into 4320462900 B (32.58% over peak live) when it
// sizes itself: an XLA dump records that XLA's heap simulator packed it, so
// offline takes rules=xla from the recording (the whole program as one heap,
// at offline's alignment 256). XLA's own assignment says "Total bytes used:
// 4320464428", 1528 B more (its allocations are laid end to end, each with its
// own alignment).
TEST(XlaProgramCli, OfflineSizesItselfWithoutALimit) {
  const CliRun r = RunHbmsim("replay " + kKernel + " --allocator offline --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("under the limit 4320462900 B"), std::string::npos) << r.out;
}

// XLA's own assignment beside offline's packing, per allocation. module_0001's
// temp allocation: the tuple tables all-gather-start{} (16 B), all-to-all-start{}
// (16 B) and {0} (8 B) are each their own allocation, laid end to end at 0, 128,
// 256 (alignment 128); the heap from 384: all-to-all.1.1 and loop_transpose_fusion
// tie on size and on duration (2 heap-simulator steps), the lower id (6) goes
// first at 0, loop_transpose_fusion above it, loop_transpose_fusion.1 under
// both in time at 0: 384 + 2 x 1047527424 = 2095055232, XLA's size, every offset XLA's.
// (hbmsim's own rules, 256-aligned, tuples in the heap: 2095055360 B, 0 of 6.)
TEST(XlaProgramCli, ReshardOfflineReproducesXlasAssignment) {
  const std::string json = TempPath("reshard-assignment.json");
  const CliRun r = RunHbmsim("replay " + kReshard + " --allocator offline --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectLine(r,
             "XLA's own assignment beside offline's packing of the same values (XLA's rules, alignment 128 B), "
             "per allocation with several values:");
  ExpectLine(r,
             "  allocation 0 (maybe-live-out): XLA 1047527424 B, offline 1047527424 B (+0 B); 2 of 2 values at "
             "XLA's offset (2095054848 of 2095054848 B) (spatial order)");
  const std::string temp =
      "  allocation 2 (preallocated-temp): XLA 2095055232 B, offline 2095055232 B (+0 B); 6 of 6 values at "
      "XLA's offset (2618818600 of 2618818600 B); 3 tuple index tables in their own allocations first, the heap "
      "from offset 384 (spatial order)";
  ExpectLine(r, temp);
  ExpectLine(r, "  the other 1 allocations hold one value each, at offset 0: 1 parameter");
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  ASSERT_TRUE(j.contains("notes")) << j.dump();
  bool found = false;
  for (const auto& n : j["notes"]) found = found || n.get<std::string>() == temp;
  EXPECT_TRUE(found) << j["notes"].dump();
}

// module_0179: 17 tuple tables, whose order is XLA's allocation order after
// CombineTempAllocations' unstable std::partition (203, 221, 261, then 200,
// 195, 192 at the end), then the heap from 17 x 128 = 2176: all 56 values at
// XLA's offset and XLA's size. (hbmsim's own rules: 3229286912 B, 0 of 56.)
TEST(XlaProgramCli, KernelOfflineReproducesXlasAssignment) {
  const CliRun full = RunHbmsim("replay " + kKernel + " --allocator bfc --no-advice");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  ExpectLine(full,
             "  allocation 13 (preallocated-temp): XLA 3229288576 B, offline 3229288576 B (+0 B); 56 of 56 values "
             "at XLA's offset (19641462312 of 19641462312 B); 17 tuple index tables in their own allocations "
             "first, the heap from offset 2176 (spatial order)");
  ExpectLine(full,
             "  allocation 0 (maybe-live-out): XLA 1061683200 B, offline 1061683200 B (+0 B); 19 of 19 values at "
             "XLA's offset (14598144004 of 14598144004 B) (spatial order)");
  ExpectLine(full, "  the other 12 allocations hold one value each, at offset 0: 3 constant, 2 maybe-live-out, 7 parameter");
}

// rules=xla comes from the recording (an XLA dump, framework "xla") and shows
// among the options; --set rules=hbmsim overrides it: 4320463156 B, 256 B more.
TEST(XlaProgramCli, OfflineTakesXlasRulesFromTheDump) {
  const CliRun r = RunHbmsim("replay " + kKernel + " --allocator offline --no-advice");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectLine(r, "  options:    alignment=256 rules=xla");
  const CliRun own = RunHbmsim("replay " + kKernel + " --allocator offline --set rules=hbmsim --quiet");
  ASSERT_EQ(own.exit_code, 0) << own.err;
  EXPECT_NE(own.out.find("under the limit 4320463156 B"), std::string::npos) << own.out;
}

}  // namespace
}  // namespace hbmsim::trace::xla
