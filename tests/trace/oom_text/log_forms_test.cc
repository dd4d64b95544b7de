// The texts as they arrive: wrapped mid-sentence, behind Ray's, absl's and
// TensorFlow's log headers, indented, or cut short. A cut block keeps what it
// shows, says what is missing, and still gets the verdict its figures allow.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/trace/oom_text/oom_text_test_util.h"
#include "trace/oom_text/log_lines.h"

namespace hbmsim::trace::oom_text {
namespace {

TEST(LogForms, PrefixesAreStripped) {
  EXPECT_EQ(StripLogPrefix("(pid=1234) RESOURCE_EXHAUSTED: x"), "RESOURCE_EXHAUSTED: x");
  EXPECT_EQ(StripLogPrefix("(RayWorker pid=12, ip=10.0.0.1) Used 1G of 2G hbm."), "Used 1G of 2G hbm.");
  EXPECT_EQ(StripLogPrefix("E1104 10:11:12.123456  4242 tpu_client.cc:88] Attempting"), "Attempting");
  EXPECT_EQ(StripLogPrefix("2022-04-04 00:27:49.642380: E tensorflow/compiler/xla/xla_util.cc:88]   (1) X"),
            "(1) X");
  EXPECT_EQ(StripLogPrefix("\u2502    In Use: 2.648 GiB"), "In Use: 2.648 GiB");
  EXPECT_EQ(StripLogPrefix("\t\t  Size: 4.16GiB  "), "Size: 4.16GiB");
  EXPECT_EQ(StripLogPrefix("(not a ray prefix) text"), "(not a ray prefix) text");
}

TEST(LogForms, SizesAsPrinted) {
  const auto size = [](std::string_view s) {
    std::optional<PrintedSize> p = ReadSize(s);
    return p ? fmt::format("{}±{} [{}]", p->bytes, p->precision, p->text) : std::string("none");
  };
  EXPECT_EQ(size("31.06M. That"), "32568771±5242 [31.06M]");
  EXPECT_EQ(size("-2.55G (  -2,735,391,744 bytes)"), "-2735391744±0 [-2.55G (  -2,735,391,744 bytes)]");
  EXPECT_EQ(size("4.0K"), "4096±51 [4.0K]");
  EXPECT_EQ(size("0B (0.00%)"), "0±0 [0B]");
  EXPECT_EQ(size("2.648 GiB"), "2843268350±536870 [2.648 GiB]");
  EXPECT_EQ(size("6291456 bytes."), "6291456±0 [6291456 bytes]");
  EXPECT_EQ(size("unknown size"), "none");
  EXPECT_EQ(size("12 of"), "none");
}

TEST(LogForms, ShapeBytes) {
  EXPECT_EQ(ShapeBytes("f32[4096,128,3]"), 6291456);
  EXPECT_EQ(ShapeBytes("bf16[2,3]{1,0:T(8,128)(2,1)}"), 12);
  EXPECT_EQ(ShapeBytes("s64[]"), 8);
  EXPECT_EQ(ShapeBytes("pred[0]"), 0);
  EXPECT_EQ(ShapeBytes("s4[16]"), std::nullopt);
  EXPECT_EQ(ShapeBytes("(f32[2], f32[3])"), std::nullopt);
  EXPECT_EQ(ShapeBytes("f64[99999999999,99999999999,99999999999]"), std::nullopt);
  EXPECT_EQ(ShapeBytes("f32[4,x]"), std::nullopt);
}

TEST(LogForms, AWrappedSentenceBehindRayHeadersReadsAsOne) {
  const std::vector<OomText> t = ReadOomTexts(
      "(pid=77) jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Attempting to allocate 31.06M. "
      "That was\n"
      "(pid=77)   not possible. There are 58.64M free. Due to fragmentation, the largest contiguous region "
      "of free\n"
      "(pid=77)   memory is 30.56M.; (0x0x0_HBM0)\n");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].line, 1u);
  EXPECT_EQ(t[0].verdict, "fragmentation");
  EXPECT_EQ(FigureLine(t[0]),
            "requested=32568771±5242 free=61488497±5242 largest_free=32044483±5242 memory_space=0x0x0_HBM0 "
            "shortfall~524288±10484 free_outside_largest~29444014±10484");
}

TEST(LogForms, ARequestLargerThanAllFreeMemoryIsAnOom) {
  const std::vector<OomText> t = ReadOomTexts(
      "E1104 10:11:12.123456  4242 pjrt.cc:88] RESOURCE_EXHAUSTED: Error allocating device buffer: "
      "Attempting to "
      "allocate 8.00M. That was not possible. There are 6.43M free.; (0x0x1_HBM0)\n");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].verdict, "oom");
  EXPECT_EQ(t[0].why,
            "8.00M was asked for and only 6.43M was free: no arrangement of the free memory holds it");
  // 6.43M is 6.43 × 2^20 = 6742343.68 B.
  EXPECT_EQ(FigureLine(t[0]),
            "requested=8388608±5242 free=6742344±5242 memory_space=0x0x1_HBM0 shortfall~1646264±10484");
}

TEST(LogForms, SizesCloserThanTheirPrecisionDecideNothing) {
  const std::vector<OomText> t =
      ReadOomTexts("Attempting to allocate 2.00G. That was not possible. There are 2.00G free.\n");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].verdict, "undetermined");
  EXPECT_EQ(t[0].why, "2.00G asked, 2.00G free: too close to tell at the printed precision");
}

TEST(LogForms, ACutSentenceSaysWhatIsMissing) {
  const std::vector<OomText> t = ReadOomTexts(
      "RuntimeError: RESOURCE_EXHAUSTED: Attempting to allocate 31.06M. That was not possible. There a");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].verdict, "undetermined");
  EXPECT_EQ(t[0].missing, std::vector<std::string>{"the free memory (\"There are Y free.\")"});
  EXPECT_EQ(FigureLine(t[0]), "requested=32568771±5242");
}

TEST(LogForms, ACompileTimeReportCutAfterItsFirstLineStillFails) {
  const std::vector<OomText> t = ReadOomTexts(
      "  XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory "
      "space "
      "hbm. Used 63.80G of 30.75G hbm. Exceeded hbm capacity by 33.05G.\n\n  Total hbm usage >= 65.05G:\n"
      "      reserved          1.25G\n      progr");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].verdict, "program does not fit");
  EXPECT_EQ(
      t[0].why,
      "the compiled program uses 63.80G of the 30.75G memory space: 33.05GiB over, decided at compile time, "
      "before anything ran");
  EXPECT_EQ(
      FigureLine(t[0]),
      "memory_space=hbm used=68504728371±5368709 capacity=33017561088±5368709 "
      "exceeded_by=35487167283±5368709 "
      "total_usage=69846905651±5368709 usage_reserved=1342177280±5368709 over_capacity~35487167283±10737418");
  EXPECT_EQ(t[0].missing, (std::vector<std::string>{"the program's requirement (\"Program hbm requirement\")",
                                                    "the largest program allocations"}));
}

TEST(LogForms, ABfcHeaderWithoutItsListingIsUndeterminedUnlessItsStatsShow) {
  const std::vector<OomText> bare = ReadOomTexts(
      "2023-01-05 10:00:00.000000: W external/org_tensorflow/tensorflow/tsl/framework/bfc_allocator.cc:479] "
      "Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.00GiB (rounded to 1073741824)requested "
      "by op \n");
  ASSERT_EQ(bare.size(), 1u);
  EXPECT_EQ(bare[0].kind, "bfc-header");
  EXPECT_EQ(bare[0].verdict, "undetermined");
  EXPECT_EQ(FigureLine(bare[0]), "allocator=GPU_0_bfc requested=1073741824±5368709 rounded=1073741824");
  EXPECT_EQ(bare[0].missing,
            std::vector<std::string>{"the chunk listing and Stats that BFC prints after this line"});
  const std::vector<OomText> stats = ReadOomTexts(
      "Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.00GiB (rounded to 1073741824)\n"
      "Stats:\nLimit:                 2147483648\nInUse:                 1610612736\n");
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].verdict, "oom");
  EXPECT_EQ(FigureLine(stats[0]),
            "allocator=GPU_0_bfc requested=1073741824±5368709 rounded=1073741824 limit=2147483648 "
            "in_use=1610612736 "
            "free~536870912 shortfall~536870912");
}

TEST(LogForms, ABareRequestIsReadWithWhatItLacks) {
  const std::vector<OomText> t = ReadOomTexts(
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
      "17179869184 bytes.\n"
      "XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 1.00GiB (1073741824B) on device "
      "ordinal 0\n");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].kind, "allocation-request");
  EXPECT_EQ(t[0].verdict, "undetermined");
  EXPECT_EQ(FigureLine(t[0]), "requested=17179869184");
  EXPECT_EQ(t[1].line, 2u);
  EXPECT_EQ(FigureLine(t[1]), "requested=1073741824 device_ordinal=0");
  EXPECT_EQ(t[1].figures[0].text, "1.00GiB (1073741824B)");
  EXPECT_EQ(t[1].why,
            "1.00GiB was asked for; the text shows no free memory, so oom and fragmentation cannot be told apart");
  ASSERT_EQ(t[1].missing.size(), 1u);
}

TEST(LogForms, AHostileLogStaysBounded) {
  std::string log;
  for (int i = 0; i < 5000; ++i)
    log += "Attempting to allocate 1B. That was not possible. There are 0B free.\n";
  const std::vector<OomText> t = ReadOomTexts(log);
  ASSERT_EQ(t.size(), 1u);  // 256 read, all the same block: one, printed again 255 times
  EXPECT_EQ(t[0].repeated_at.size(), 255u);
  EXPECT_TRUE(ReadOomTexts(std::string(100000, '(')).empty());
  EXPECT_TRUE(ReadOomTexts("Attempting to allocate ").empty());
  EXPECT_TRUE(ReadOomTexts("Used 99999999999999999999999G of 1G hbm").empty());
}

}  // namespace
}  // namespace hbmsim::trace::oom_text
