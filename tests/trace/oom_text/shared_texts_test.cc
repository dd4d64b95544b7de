// Every shared OOM text (../shared/jax_tpu/oom_texts), figure by figure: the
// kind and line of each block, its verdict, each figure seen (bytes of the
// printed size, ± what its rounding leaves open) or derived, the program
// allocations, what the text does not show. A printed "31.06M" is
// 31.06 × 2^20 = 32568770.56 → 32568771 ± 0.005 × 2^20 (5242).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/trace/oom_text/oom_text_test_util.h"

namespace hbmsim::trace::oom_text {
namespace {

const std::string kDir = std::string(HBMSIM_SHARED_DIR) + "/jax_tpu/oom_texts/";

std::vector<OomText> Read(const std::string& file) {
  absl::StatusOr<std::vector<OomText>> t = ReadOomTextFile(kDir + file);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : std::vector<OomText>{};
}

TEST(SharedOomTexts, TpuAllocationIsFragmentation) {
  const std::vector<OomText> t = Read("google-trax_431_1.txt");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].kind, "tpu-allocation");
  EXPECT_EQ(t[0].line, 2u);
  EXPECT_EQ(t[0].verdict, "fragmentation");
  EXPECT_EQ(FigureLine(t[0]),
            "requested=32568771±5242 free=61488497±5242 largest_free=32044483±5242 memory_space=0x0x0_HBM0 "
            "shortfall~524288±10484 free_outside_largest~29444014±10484");
  EXPECT_EQ(
      t[0].why,
      "58.64M was free, enough for 31.06M, but the largest contiguous region was 30.56M: 512.0KiB short");
  EXPECT_EQ(t[0].would_fit, (std::vector<std::string>{
                                "a request of at most 30.56M fits as the memory is",
                                "for 31.06M, 512.0KiB more must join the largest region: free the buffers "
                                "beside it, or allocate the long-lived buffers first so they do not cut the "
                                "free memory"}));
  EXPECT_TRUE(t[0].missing.empty());
}

TEST(SharedOomTexts, AllocatableAndAvailableIsFragmentation) {
  const std::vector<OomText> t = Read("jax-ml-jax_14304_1.txt");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].kind, "tpu-allocatable");
  EXPECT_EQ(t[0].verdict, "fragmentation");
  // "4374528 bytes allocatable" is read as the largest request the memory takes, "available" as free.
  EXPECT_EQ(FigureLine(t[0]),
            "requested=10485760 memory_space=0x0x0_HBM0 largest_free=4374528 free=14942208 shortfall~6111232 "
            "free_outside_largest~10567680");
}

TEST(SharedOomTexts, BufferAssignmentsShowStatsAndPeakBuffers) {
  const std::vector<OomText> a = Read("jax-ml-jax_13428_1.txt");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, "buffer-assignment");
  EXPECT_EQ(a[0].line, 2u);
  EXPECT_EQ(a[0].verdict, "undetermined");
  EXPECT_EQ(
      FigureLine(a[0]),
      "requested=6291456 parameter_allocation=6291456±5242 constant_allocation=0 "
      "maybe_live_out_allocation=6291456±5242 preallocated_temp_allocation=0 total_allocation=12582912±5242 "
      "total_fragmentation=0 donatable~6291456±5242");
  ASSERT_EQ(a[0].allocations.size(), 2u);
  EXPECT_EQ(a[0].allocations[0].size->text, "6.00MiB");
  EXPECT_EQ(a[0].allocations[0].op, "jit(concatenate)/jit(main)/concatenate[dimension=0]");
  EXPECT_EQ(a[0].allocations[0].source, "models.py:689");
  EXPECT_EQ(a[0].allocations[0].label, "concatenate");
  EXPECT_EQ(a[0].allocations[0].shape, "f32[4096,128,3]");
  EXPECT_EQ(a[0].allocations[1].size->text, "384.0KiB");
  EXPECT_EQ(a[0].allocations[1].type, "entry parameter");
  EXPECT_EQ(a[0].allocations[1].shape, "f32[256,128,3]");
  EXPECT_EQ(a[0].would_fit,
            (std::vector<std::string>{
                "the program needs 12.00MiB: parameters 6.00MiB (50%), outputs 6.00MiB (50%), temp 0B (0%)",
                "donating the parameters (jax.jit donate_argnums) lets the outputs reuse their memory: up to "
                "6.00MiB less",
                "the device must have 6291456 bytes free in one piece",
                "the failing request is exactly the size of peak buffer 1 (f32[4096,128,3], "
                "jit(concatenate)/jit(main)/concatenate[dimension=0])"}));
  EXPECT_EQ(a[0].allocations[0].shape_bytes, 6291456);  // 4 × 4096 × 128 × 3

  const std::vector<OomText> b = Read("pymc-devs-pymc-extras_188_1.txt");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(FigureLine(b[0]),
            "requested=4464000000 parameter_allocation=4466765988±5368709 constant_allocation=0 "
            "maybe_live_out_allocation=4466765988±5368709 preallocated_temp_allocation=0 "
            "total_allocation=8922794557±5368709 total_fragmentation=0 donatable~4466765988±5368709");
  ASSERT_EQ(b[0].allocations.size(), 3u);  // tab-indented
  EXPECT_EQ(b[0].allocations[1].source, "scalar.py:103");
  EXPECT_EQ(b[0].allocations[1].op, "jit(fn)/jit(main)/mul");
  EXPECT_EQ(b[0].allocations[2].size->text, "8B");
  EXPECT_EQ(b[0].allocations[2].shape, "s64[]");
  EXPECT_EQ(b[0].allocations[2].shape_bytes, 8);
  // 8 × 31 × 200 × 300 × 300 = 4464000000: the parameter and the mul's output both have the request's size.
  EXPECT_EQ(b[0].would_fit.back(),
            "the failing request is exactly the size of peak buffer 1 (f64[31,200,300,300]) and of 2 "
            "(f64[31,200,300,300], jit(fn)/jit(main)/mul)");
}

TEST(SharedOomTexts, CompileTimeReports) {
  const std::vector<OomText> a = Read("DifferentiableUniverseInitiative-flowpm_27_1.txt");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, "compile-time");
  EXPECT_EQ(a[0].verdict, "program does not fit");
  EXPECT_EQ(
      FigureLine(a[0]),
      "memory_space=hbm used=44817983734±5368709 capacity=17179869184±5368709 "
      "exceeded_by=27638114550±5368709 "
      "total_usage=44817983734±5368709 usage_reserved=553648128±5242 usage_program=44259637985±5368709 "
      "program_requirement=44259637985±5368709 requirement_reserved=4096±51 requirement_global=31268536±5242 "
      "hlo_temp=44227425731±5368709 hlo_temp_utilization=24.2% hlo_temp_fragmentation=0.7% "
      "hlo_temp_fragmentation_bytes=308113572±5242 over_capacity~27638114550±10737418 "
      "used_without_largest~10458245366±10737418 used_without_its_padding~11531987190±10737418");
  // Without the 32.00G allocation, or only its 31.00G of padding, the program fits in 16.00G.
  EXPECT_EQ(
      a[0].would_fit,
      (std::vector<std::string>{
          "the program must shrink by 25.74G (smaller batch or model shards, rematerialization, less "
          "padding) "
          "or run on a device with that much more memory",
          "without the largest program allocation (32.00G, slicewise_79/cic_update/FloorMod): 9.74GiB of "
          "16.00G, fits",
          "with its padding dropped (31.00G, 32.0x expansion, e.g. a layout whose minor dimension fills the "
          "(8,128) tile): 10.74GiB of 16.00G, fits"}));
  ASSERT_EQ(a[0].allocations.size(), 1u);
  EXPECT_EQ(a[0].allocations[0].shape, "s32[8388608,8,4]{2,1,0:T(8,128)}");
  EXPECT_EQ(a[0].allocations[0].unpadded->text, "1.00G");
  EXPECT_EQ(a[0].allocations[0].shape_bytes, 1073741824);  // 4 × 8388608 × 8 × 4: the unpadded 1.00G, exactly
  EXPECT_EQ(a[0].allocations[0].expansion, "32.0x");
  EXPECT_EQ(a[0].missing, (std::vector<std::string>{"the arguments' size (\"unknown size\")",
                                                    "the output size (\"unknown\")"}));

  const std::vector<OomText> b = Read("erfanzar-EasyDeL_166_1.txt");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(
      FigureLine(b[0]),
      "memory_space=hbm used=68504728371±5368709 capacity=33017561088±5368709 "
      "exceeded_by=35487167283±5368709 "
      "total_usage=69846905651±5368709 usage_reserved=1342177280±5368709 usage_program=68504728371±5368709 "
      "usage_arguments=0 output_size=0 output_shared_with_arguments=0 "
      "program_requirement=68504728371±5368709 "
      "requirement_global=1195377±5242 requirement_scoped=4781507±5242 hlo_temp=68493990953±5368709 "
      "hlo_temp_utilization=100% hlo_temp_unpadded=68268505170±5368709 hlo_temp_padded=68268505170±5368709 "
      "hlo_temp_fragmentation=0.3% hlo_temp_fragmentation_bytes=221134193±5242 "
      "over_capacity~35487167283±10737418 hlo_temp_padding~0±10737418 "
      "used_without_largest~66357244723±10737418");
  ASSERT_EQ(b[0].allocations.size(), 2u);  // the paste ends at the second one's size
  EXPECT_EQ(b[0].allocations[0].source, "attention_module.py:1059");
  EXPECT_EQ(b[0].allocations[0].type, "HLO temp");
  EXPECT_EQ(b[0].allocations[0].shape, "f32[32,4096,4096]{1,2,0:T(8,128)}");
  EXPECT_TRUE(b[0].allocations[1].cut);
  EXPECT_EQ(b[0].missing, std::vector<std::string>{"allocation 2 shows only its size (the text ends there)"});
}

TEST(SharedOomTexts, ProgramReservations) {
  const std::vector<OomText> a = Read("pytorch-xla_1735_1.txt");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, "program-reservation");
  EXPECT_EQ(a[0].line, 3u);
  EXPECT_EQ(a[0].verdict, "program does not fit");
  // The exact bytes in parentheses win over the rounded size; the runtime's availability is recomputed.
  EXPECT_EQ(
      FigureLine(a[0]),
      "requested=4241280205±5368709 free=2061584302±5368709 reserved=0 reservable=2061584302±5368709 "
      "hbm_capacity=8589934592±5368709 top_of_memory_reserved=554696704 currently_allocated=6532939776 "
      "program_requirement_at_reservation=4237689856 available_after_request=-2735391744 "
      "total_usage=11746735555±5368709 usage_reserved=554696704±5242 heap_allocations=6528350290±5368709 "
      "usage_program=4660039516±5368709 max_free_chunk=2061584302±5368709 heap_fragmentation=0% "
      "persistent_arguments=501292728±5242 persistent_output=5433133629±5368709 "
      "program_requirement=4660039516±5368709 requirement_reserved=4096±51 requirement_global=4096±51 "
      "requirement_scoped=18276680±5242 hlo_temp=4219805368±5368709 hlo_temp_utilization=97.4% "
      "hlo_temp_unpadded=4090956349±5368709 hlo_temp_padded=4209067950±5368709 hlo_temp_fragmentation=0.4% "
      "hlo_temp_fragmentation_bytes=15393096±5242 shortfall~2179695903±10737418 "
      "available_after_request_computed~-2735391744±5368709 hlo_temp_padding~118111601±10737418");
  EXPECT_EQ(
      a[0].why,
      "the program needs 3.95G and only 1.92G was free: 2.03GiB short even if all of it were at the bottom");

  const std::vector<OomText> b = Read("pytorch-xla_3470_1.txt");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].line, 2u);  // after TensorFlow's log header
  EXPECT_EQ(FigureLine(b[0]),
            "requested=6957847020±5368709 free=7279969567±5368709 reserved=0 reservable=3575560274±5368709 "
            "shortfall~3382286746±10737418");
  EXPECT_EQ(
      b[0].why,
      "6.78G was free, enough for the program's 6.48G, but only 3.33G of it was reservable (right above the "
      "programs, at the bottom of memory): live buffers sit where the program must go");
  EXPECT_EQ(b[0].repeated_at, std::vector<size_t>{9});
  EXPECT_EQ(b[0].missing,
            (std::vector<std::string>{
                "the HBM capacity block (capacity, top-of-memory reserved, currently allocated)",
                "the program's requirement (\"Program hbm requirement\")"}));
}

TEST(SharedOomTexts, AllocatorStatsShowNoFailure) {
  const std::vector<OomText> t = Read("EnzymeAD-Enzyme-JAX_2422_1.txt");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].kind, "allocator-stats");
  EXPECT_EQ(t[0].line, 4u);
  EXPECT_EQ(t[0].verdict, "no failure shown");
  // Behind a REPL's box drawing ("│    In Use: 2.648 GiB").
  EXPECT_EQ(
      FigureLine(t[0]),
      "allocations=44 in_use=2843268350±536870 peak_in_use=2843268350±536870 largest_alloc=188743680±524 "
      "limit=33550137033±536870 reserved=29260538446±536870 peak_reserved=29260538446±536870 "
      "reservable_limit=30884036084±536870 largest_free=1446330237±536870 "
      "free_under_limit~30706868683±1073740 reserved_not_in_use~26417270096±1073740 "
      "reservable_headroom~1623497638±1073740");
}

}  // namespace
}  // namespace hbmsim::trace::oom_text
