// End to end on the shared JAX device memory profiles: `inspect` and
// `replay` show each device's buffers by frame and kind, the headroom under
// a limit, and `--probe` answers worked out by hand; `convert` writes the
// buffers as a text trace; a cut profile is one line and exit 2.
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::trace::pprof {
namespace {

using ::hbmsim::testing::ReadFile;
using ::hbmsim::testing::RunHbmsim;
using ::hbmsim::testing::TempPath;
using ::hbmsim::testing::WriteFile;

const std::string kDir = std::string(HBMSIM_SHARED_DIR) + "/jax_tpu/pprof/";
const std::string kTinyVla = kDir + "3DAlgoLab__TinyVLA__6ba9ad949b19__memory.prof";
const std::string kTpu8 = kDir + "sholtodouglas__scalingExperiments__fd1f687a9499__memory.prof";

// The lines of `text` that contain `part`.
std::string Lines(const std::string& text, const std::string& part) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    const std::string line = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    if (line.find(part) != std::string::npos) out += line + "\n";
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return out;
}

// cuda:0 holds 4000000 + 40000000 + 40000000 B, in that order, multiples of BFC's 256 B. At
// 200000000 B every placement splits its free chunk (it is at least twice the request), so the
// buffers end at 84000000 and 116000000 B stay free in one chunk: a request of exactly that fits
// there; one byte more rounds to 116000256 and is an oom.
TEST(PprofCli, InspectShowsKindFrameHeadroomAndBfcProbes) {
  const auto run =
      RunHbmsim("inspect " + kTinyVla + " --bytes-limit 200000000 --probe 116000000 --probe 116000001");
  EXPECT_EQ(run.exit_code, 1) << run.err;  // a probe does not fit
  EXPECT_EQ(run.out.substr(0, run.out.find("\n  probe")),
            kTinyVla +
                ": JAX device memory profile (pprof), what was live when it was taken: 1 device, 3 buffers "
                "holding 84000000 B (80.11MiB)\n\n"
                "Device 0 (cuda:0): 3 buffers, 84000000 B (80.11MiB)\n"
                "  headroom under 200000000 B (190.73MiB) (--bytes-limit): 116000000 B (110.63MiB)\n"
                "  by kind\n"
                "     100.0%       84000000   80.11MiB       3  buffer\n"
                "  by frame (the innermost frame of the user's own code)\n"
                "      47.6%       40000000   38.15MiB       1  jax_intro2.py:12 func2  [buffer]\n"
                "      47.6%       40000000   38.15MiB       1  jax_intro2.py:7 func1  [buffer]\n"
                "       4.8%        4000000    3.81MiB       1  jax_intro2.py:15 <module>  [buffer]");
  EXPECT_EQ(Lines(run.out, "  probe "),
            "  probe 116000000 B (110.63MiB): fits under bfc (rounded to 116000000, placed at 0x501bd00; the "
            "buffers take 84000000 B (80.11MiB) under bfc)\n"
            "  probe 116000001 B (110.63MiB): does not fit under bfc: oom (116000256 rounded; 116000000 B "
            "(110.63MiB) free, largest free block 116000000 B (110.63MiB); the buffers take 84000000 B "
            "(80.11MiB) under bfc)\n");
  EXPECT_EQ(Lines(run.out, "  [executable]"),
            "      63.9%          19024    18.6KiB       3  jax_intro2.py:15 <module>  [executable]\n"
            "      24.1%           7184     7.0KiB       5  jax_intro2.py:7 func1  [executable]\n"
            "      12.0%           3560     3.5KiB       1  jax_intro2.py:12 func2  [executable]\n");
  EXPECT_NE(run.out.find("Placement assumed by the probes: a profile records no addresses"),
            std::string::npos);
}

// At 100000000 B the third buffer meets a 56000000 B chunk: less than twice its size and less than
// 128 MiB over it, so BFC hands it the whole chunk (no split). Nothing is left, though the
// headroom says 16000000 B: the probe of 1 B is an oom, and the report says what the buffers take.
TEST(PprofCli, BfcsUnsplitChunkLeavesNoRoomBelowTheHeadroom) {
  const auto run = RunHbmsim("inspect " + kTinyVla + " --bytes-limit 100000000 --probe 1");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(
      Lines(run.out, "headroom") + Lines(run.out, "  probe "),
      "  headroom under 100000000 B (95.37MiB) (--bytes-limit): 16000000 B (15.26MiB)\n"
      "  probe 1 B (1B): does not fit under bfc: oom (256 rounded; 0 B (0B) free, largest free block 0 B "
      "(0B); the buffers take 100000000 B (95.37MiB) under bfc)\n");
}

// TPU_1 holds 12 buffers, 14580736 B, each a multiple of the 512 B granule: at 16 MiB the tpu
// policy leaves 2196480 B free below them. That fits at 0; one byte more rounds to 2196992: oom.
TEST(PprofCli, TpuDevicesProbeThroughTheTpuPolicy) {
  const auto run =
      RunHbmsim("inspect " + kTpu8 + " --bytes-limit 16MiB --probe 2196480 --probe 2196481 --device 1");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(
      Lines(run.out, "Device ") + Lines(run.out, "  probe "),
      "Device 1 (TPU_1(process=0,(0,0,0,1))): 12 buffers, 14580736 B (13.91MiB)\n"
      "  probe 2196480 B (2.09MiB): fits under tpu (rounded to 2196480, placed at 0x0; the buffers take "
      "14580736 B (13.91MiB) under tpu)\n"
      "  probe 2196481 B (2.09MiB): does not fit under tpu: oom (2196992 rounded; 2196480 B (2.09MiB) free, "
      "largest free block 2196480 B (2.09MiB); the buffers take 14580736 B (13.91MiB) under tpu)\n");
  // TPU executables are recorded as -1 B each: counted, never summed.
  EXPECT_EQ(Lines(run.out, "  executable  ("),
            "       0.0%              0         0B      31  executable  (31 of unknown size)\n");
}

// A device preset's bytes_limit is the limit when none is given: TPU v3 is 16 GiB per core.
TEST(PprofCli, ADevicePresetGivesTheLimit) {
  const auto run = RunHbmsim("inspect " + kTpu8 + " --allocator " + std::string(HBMSIM_SOURCE_DIR) +
                             "/configs/tpu_v3.yaml --probe 1GiB --device 0");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(
      Lines(run.out, "headroom") + Lines(run.out, "  probe "),
      "  headroom under 17179869184 B (16.00GiB) (bytes_limit of " + std::string(HBMSIM_SOURCE_DIR) +
          "/configs/tpu_v3.yaml): 17163709440 B (15.98GiB)\n"
          "  probe 1073741824 B (1.00GiB): fits under tpu (rounded to 1073741824, placed at 0x3bf096c00; the "
          "buffers take 16159744 B (15.41MiB) under tpu)\n");
}

TEST(PprofCli, ReplayGivesTheHeldReportAndJsonForEveryDevice) {
  const std::string json = TempPath("held.json");
  const auto run = RunHbmsim("replay " + kTpu8 + " --json " + json);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(
      run.out.substr(0, run.out.find('\n')),
      kTpu8 +
          " holds what a JAX runtime had live at one moment, with no addresses and no trace to replay: its "
          "state (`hbmsim inspect " +
          kTpu8 +
          " --probe SIZE --bytes-limit LIMIT` asks whether a request "
          "would fit)");
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  ASSERT_EQ(j["devices"].size(), 8u);
  EXPECT_EQ(j["devices"][0]["name"], "TPU_0(process=0,(0,0,0,0))");
  EXPECT_EQ(j["devices"][0]["buffers"], 19);
  EXPECT_EQ(j["devices"][0]["buffer_bytes"], 16159744);
  EXPECT_EQ(j["devices"][7]["device"], 7);
  EXPECT_EQ(j["devices"][7]["buffer_bytes"], 14580736);
  EXPECT_EQ(j["devices"][7]["by_frame"][0]["key"], "1559509576.py:5 <module>  [buffer]");
  EXPECT_EQ(j["devices"][7]["by_frame"][0]["bytes"], 14186496);
  EXPECT_EQ(j["no_device"]["by_kind"][0]["unknown_size"], 31);
  EXPECT_EQ(j["bytes_limit"], nullptr);
}

TEST(PprofCli, ConvertWritesTheBuffersAsAStartState) {
  const std::string out = TempPath("tiny.trace");
  const auto run = RunHbmsim("convert " + kTinyVla + " " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(
      ReadFile(out),
      "# hbmsim-trace v1\n"
      "# allocator: bfc\n"
      "# warning: 9 held of kind executable (29768 B as recorded) are not allocations of any device here: "
      "the profile gives them no device or no size\n"
      "alloc 1 4000000 tag=preexisting kind=buffer frame=jax_intro2.py:15\n"
      "alloc 2 40000000 tag=preexisting kind=buffer frame=jax_intro2.py:12\n"
      "alloc 3 40000000 tag=preexisting kind=buffer frame=jax_intro2.py:7\n");
  const auto replay = RunHbmsim("replay " + out + " --bytes-limit 200000000 --quiet");
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
}

TEST(PprofCli, DevicesAreChosenByLabelAndBadInputIsOneLine) {
  const auto named = RunHbmsim("inspect " + kTinyVla + " --device cuda:0");
  EXPECT_EQ(named.exit_code, 0) << named.err;
  const auto absent = RunHbmsim("inspect " + kTinyVla + " --device gpu:1");
  EXPECT_EQ(absent.exit_code, 2);
  EXPECT_EQ(absent.err,
            "hbmsim inspect: --device gpu:1: " + kTinyVla + " holds nothing on it; devices: 0 (cuda:0)\n");
  const auto no_limit = RunHbmsim("inspect " + kTinyVla + " --probe 1MiB");
  EXPECT_EQ(no_limit.exit_code, 2);
  EXPECT_EQ(
      no_limit.err,
      "hbmsim inspect: --probe needs --bytes-limit (or an --allocator preset with a bytes_limit, such as "
      "configs/tpu_v3.yaml): a device memory profile records no device capacity\n");
  const auto diagnose = RunHbmsim("diagnose " + kTinyVla);
  EXPECT_EQ(diagnose.exit_code, 2);
  EXPECT_EQ(diagnose.err,
            "hbmsim diagnose: " + kTinyVla +
                ": no BFC allocator dump found (8 lines, 8 not part of a dump); it is a recording "
                "(jax-device-profile): `hbmsim inspect " +
                kTinyVla + "` shows what it holds\n");
  const std::string cut = TempPath("cut.prof");
  WriteFile(cut, ReadFile(kTinyVla).substr(0, 700));
  for (const char* command : {"inspect", "replay", "convert"}) {
    const auto run = RunHbmsim(std::string(command) + " " + cut +
                               (command == std::string("convert") ? " " + TempPath("o.trace") : ""));
    EXPECT_EQ(run.exit_code, 2) << command;
    EXPECT_EQ(run.err, "hbmsim " + std::string(command) + ": " + cut +
                           ": byte offset 700: the gzip stream is cut short\n");
    EXPECT_EQ(run.out, "");
  }
}

// Two notebooks' profiles on the same 8 TPU cores: TPU_0 grew by 251040768 - 16159744 = 234881024 B,
// all of it in three cells the baseline did not have (134217728 + 67108864 + 33554432).
TEST(PprofCli, CompareTwoProfilesSaysWhatGrewByDeviceKindAndFrame) {
  const std::string json = TempPath("diff.json");
  const std::string candidate =
      kDir + "sholtodouglas__scalingExperiments__e8c863c15775__model_parallel_tutorial__memory.prof";
  const auto run = RunHbmsim("compare --baseline " + kTpu8 + " --candidate " + candidate + " --json " + json);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string tpu0 =
      run.out.substr(run.out.find("\nTPU_0"), run.out.find("\nTPU_1") - run.out.find("\nTPU_0"));
  EXPECT_EQ(
      tpu0.substr(0, tpu0.rfind('\n', tpu0.find("+0 ")) + 1),
      "\nTPU_0(process=0,(0,0,0,0)): 16159744 B -> 251040768 B, +234881024 B (+224.00MiB)\n"
      "  by kind\n"
      "              change       baseline      candidate    count  key\n"
      "          +234881024       16159744      251040768       +3  buffer\n"
      "  by frame (the innermost frame of the user's own code)\n"
      "              change       baseline      candidate    count  key\n"
      "          +134217728              0      134217728       +1  4078591761.py:2 <module>  [buffer]\n"
      "           +67108864              0       67108864       +1  3163193449.py:14 matmult  [buffer]\n"
      "           +33554432              0       33554432       +1  4078591761.py:1 <module>  [buffer]\n");
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  ASSERT_EQ(j["held"].size(), 9u);  // 8 devices, then what is on no device
  EXPECT_EQ(j["held"][0]["delta_bytes"], 234881024);
  EXPECT_EQ(j["held"][8]["scope"], "on no device");
  EXPECT_EQ(j["held"][8]["by_kind"][0]["baseline_count"], 31);
  EXPECT_EQ(j["held"][8]["by_kind"][0]["candidate_count"], 30);
  const auto self = RunHbmsim("compare --baseline " + kTinyVla + " --candidate " + kTinyVla);
  ASSERT_EQ(self.exit_code, 0) << self.err;
  EXPECT_NE(self.out.find("cuda:0: 84000000 B -> 84000000 B, 0 B (0B)\n"), std::string::npos) << self.out;
}

}  // namespace
}  // namespace hbmsim::trace::pprof
