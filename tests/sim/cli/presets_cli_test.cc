// Device presets for the limit (sim/config/device_presets.h): the exact
// bytes of each documented figure, --bytes-limit NAME in every command that
// takes a limit, the listing, and the message for a name that is no preset.
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "sim/config/device_presets.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::testing {
namespace {

TEST(DevicePresets, EachIsItsDocumentedFigure) {
  const DevicePreset* a100 = FindDevicePreset("a100-40gb");
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(a100->bytes.value(), 42298834944u);  // deviceQuery's totalGlobalMem
  EXPECT_EQ(a100->figure, "cuda-total");
  EXPECT_EQ(FindDevicePreset("H100-80GB")->bytes.value(), 81559ull << 20);  // names are case-insensitive
  EXPECT_EQ(FindDevicePreset("l4")->bytes.value(), 23034ull << 20);
  EXPECT_EQ(FindDevicePreset("t4")->bytes.value(), 15843721216u);
  EXPECT_EQ(FindDevicePreset("tpu-v5e")->bytes.value(), 16ull << 30);
  EXPECT_EQ(FindDevicePreset("a100"), nullptr);
  for (const DevicePreset& p : DevicePresets()) EXPECT_FALSE(p.source.empty()) << p.name;
}

TEST(DevicePresets, ALimitIsAPresetOrASize) {
  absl::StatusOr<ParsedLimit> p = ParseLimitOrPreset("a100-40gb", "--bytes-limit");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->bytes.value(), 42298834944u);
  EXPECT_EQ(p->source, "--bytes-limit a100-40gb (NVIDIA A100-SXM4-40GB, cuda-total)");
  absl::StatusOr<ParsedLimit> size = ParseLimitOrPreset("16GiB", "--bytes-limit");
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(size->bytes.value(), 16ull << 30);
  EXPECT_EQ(size->source, "--bytes-limit");
  absl::StatusOr<ParsedLimit> word = ParseLimitOrPreset("a100", "--bytes-limit");
  ASSERT_FALSE(word.ok());
  EXPECT_EQ(std::string(word.status().message()),
            "--bytes-limit a100: not a size and not a device preset (hbmsim presets lists them: a100-40gb, "
            "a100-80gb, h100-80gb, h200, l40s, l4, a10, t4, tpu-v4, tpu-v5e, tpu-v5p, tpu-v6e)");
}

TEST(PresetsCli, ReplayAtAPresetSaysWhichCard) {
  const std::string json = TempPath("preset_replay.json");
  const CliRun run =
      RunHbmsim("replay configs/examples/fits.trace --allocator bfc --bytes-limit l4 --quiet --json " + json);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["allocator"]["bytes_limit"], 23034ull << 20);
  EXPECT_EQ(j["allocator"]["bytes_limit_source"], "--bytes-limit l4 (NVIDIA L4, nvml-total)");
}

TEST(PresetsCli, AnUnknownNameIsOneLineAndExit2) {
  const CliRun run = RunHbmsim("replay configs/examples/fits.trace --allocator bfc --bytes-limit a100");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(
      run.err,
      "hbmsim replay: --bytes-limit a100: not a size and not a device preset (hbmsim presets lists them: "
      "a100-40gb, a100-80gb, h100-80gb, h200, l40s, l4, a10, t4, tpu-v4, tpu-v5e, tpu-v5p, tpu-v6e)\n");
}

TEST(PresetsCli, ListsEveryPresetWithItsSource) {
  const std::string json = TempPath("presets.json");
  const CliRun run = RunHbmsim("presets --json " + json);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("a100-40gb      42298834944   39.39GiB  cuda-total    NVIDIA A100-SXM4-40GB"),
            std::string::npos)
      << run.out;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  ASSERT_EQ(j["presets"].size(), DevicePresets().size());
  EXPECT_EQ(j["presets"][0]["name"], "a100-40gb");
  EXPECT_EQ(j["presets"][0]["bytes"], 42298834944u);
  EXPECT_EQ(j["presets"][0]["figure"], "cuda-total");
}

}  // namespace
}  // namespace hbmsim::testing
