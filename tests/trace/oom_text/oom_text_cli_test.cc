// `hbmsim diagnose` on every shared OOM text: exit 0 with a verdict line per
// block, the JSON's figures, and a log with nothing to explain still exit 2.
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::trace::oom_text {
namespace {

using ::hbmsim::testing::ReadFile;
using ::hbmsim::testing::RunHbmsim;
using ::hbmsim::testing::TempPath;
using ::hbmsim::testing::WriteFile;

const std::string kDir = std::string(HBMSIM_SHARED_DIR) + "/jax_tpu/oom_texts/";

TEST(OomTextCli, EverySharedTextGetsItsVerdict) {
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"DifferentiableUniverseInitiative-flowpm_27_1.txt", "program does not fit"},
      {"EnzymeAD-Enzyme-JAX_2422_1.txt", "no failure shown"},
      {"erfanzar-EasyDeL_166_1.txt", "program does not fit"},
      {"google-trax_431_1.txt", "fragmentation"},
      {"jax-ml-jax_13428_1.txt", "undetermined"},
      {"jax-ml-jax_14304_1.txt", "fragmentation"},
      {"pymc-devs-pymc-extras_188_1.txt", "undetermined"},
      {"pytorch-xla_1735_1.txt", "program does not fit"},
      {"pytorch-xla_3470_1.txt", "program does not fit"},
  };
  for (const auto& [file, verdict] : expected) {
    const auto run = RunHbmsim("diagnose " + kDir + file);
    EXPECT_EQ(run.exit_code, 0) << file << run.err;
    EXPECT_NE(run.out.find("  verdict: " + verdict + ": "), std::string::npos) << file << "\n" << run.out;
    EXPECT_EQ(run.err, "") << file;
  }
}

TEST(OomTextCli, TheTextReportAndTheJson) {
  const std::string json = TempPath("trax.json");
  const auto run = RunHbmsim("diagnose " + kDir + "google-trax_431_1.txt --json " + json);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(
      run.out.substr(0, run.out.find("  what would fit")),
      kDir +
          "google-trax_431_1.txt:2: the TPU runtime could not allocate a buffer\n"
          "  verdict: fragmentation: 58.64M was free, enough for 31.06M, but the largest contiguous region "
          "was 30.56M: 512.0KiB short\n"
          "  figures (seen: as the text prints it; derived: how):\n"
          "    requested                            seen               32568771 B ±5242  31.06M\n"
          "    free                                 seen               61488497 B ±5242  58.64M\n"
          "    largest_free                         seen               32044483 B ±5242  30.56M\n"
          "    memory_space                         seen                                 0x0x0_HBM0\n"
          "    shortfall                            derived             524288 B ±10484  requested - "
          "largest_free\n"
          "    free_outside_largest                 derived           29444014 B ±10484  free - "
          "largest_free\n");
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  ASSERT_EQ(j["oom_texts"].size(), 1u);
  const nlohmann::json& t = j["oom_texts"][0];
  EXPECT_EQ(t["kind"], "tpu-allocation");
  EXPECT_EQ(t["verdict"], "fragmentation");
  EXPECT_EQ(t["figures"][0],
            nlohmann::json::parse(R"({"name": "requested", "source": "seen", "bytes": 32568771,
                                                       "precision_bytes": 5242, "printed": "31.06M"})"));
  EXPECT_EQ(t["figures"][4]["source"], "derived");
  EXPECT_EQ(t["figures"][4]["how"], "requested - largest_free");
  EXPECT_EQ(j["dumps"], nlohmann::json::array());
}

TEST(OomTextCli, TheLargestProgramAllocationsAreATable) {
  const auto run = RunHbmsim("diagnose " + kDir + "DifferentiableUniverseInitiative-flowpm_27_1.txt");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const size_t at = run.out.find("  largest program allocations:");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(
      run.out.substr(at, run.out.find("  not in this text") - at),
      "  largest program allocations:\n"
      "      #       size   unpadded    padding expansion  type             source                       "
      "shape "
      "/ op\n"
      "      1     32.00G      1.00G     31.00G     32.0x  -                -                            "
      "s32[8388608,8,4]{2,1,0:T(8,128)}\n"
      "        op: slicewise_79/cic_update/FloorMod\n");
}

TEST(OomTextCli, BytesThatAreNotUtf8AreReplacedInTheJson) {
  const std::string log = TempPath("latin1.log");
  WriteFile(log, "Attempting to allocate 1.00M. That was not possible. There are 2.00M free.; (\xff\xfe)\n");
  const std::string json = TempPath("latin1.json");
  const auto run = RunHbmsim("diagnose " + log + " --json " + json);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["oom_texts"][0]["figures"][2]["printed"], "\ufffd\ufffd");
}

TEST(OomTextCli, ALogWithNothingToExplainIsStillBadInput) {
  const std::string log = TempPath("plain.log");
  WriteFile(log, "epoch 1 loss 0.3\nepoch 2 loss 0.2\n");
  const auto run = RunHbmsim("diagnose " + log);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "hbmsim diagnose: " + log + ": no BFC allocator dump found (2 lines, 2 not part of a dump)\n");
}

}  // namespace
}  // namespace hbmsim::trace::oom_text
