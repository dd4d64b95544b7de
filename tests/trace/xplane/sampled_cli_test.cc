// End to end on the harder shared profiles: the sampled TPU v3-8 memory
// profile replayed on every core under `tpu` with the v3 facts
// (configs/tpu_v3_core.yaml), its lost events counted; and the allow_growth
// JAX profile whose region sizes the fragmentation readings choose.
#include <filesystem>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/trace/xplane/xplane_test_util.h"
#include "nlohmann/json.hpp"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::trace::xplane {
namespace {

using ::hbmsim::testing::ReadFile;
using ::hbmsim::testing::RunHbmsim;
using ::hbmsim::testing::TempPath;

const std::string kTpu = kSharedProfiles + "jax_tpu_v3-8_vit.memory_profile.json.gz";
const std::string kTpuConfig = std::string(HBMSIM_SOURCE_DIR) + "/configs/tpu_v3_core.yaml";

// The start-state note that counts the lost events.
std::string SampledNote(const nlohmann::json& j) {
  for (const nlohmann::json& n : j["recording"]["start_state_notes"]) {
    if (n.get<std::string>().starts_with("sampled:")) return n;
  }
  return "";
}

nlohmann::json Replay(const std::string& file, const std::string& allocator, const std::string& device) {
  const std::string json = TempPath("sampled.json");
  const auto run =
      RunHbmsim(fmt::format("replay {} --allocator {} --check-recorded --no-advice --json {} --device {}",
                            file, allocator, json, device));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  if (run.exit_code != 0) return nlohmann::json::object();
  return nlohmann::json::parse(ReadFile(json));
}

struct CoreWant {
  std::string counts;
  std::string note;
};

// The note's text for core `c`: the gaps, the lost frees and allocations, the gaps with bytes at
// unknown addresses and those bytes, the first three gaps (before snapshots[a], [b], [e]).
std::string Note(int c, int gaps, int frees, int allocations, int unexplained, int64_t in, int64_t out, int a, int b,
                 int e) {
  const auto at = [c](int i) {
    return fmt::format("memoryProfilePerAllocator.{}.memoryProfileSnapshots[{}]", c, i);
  };
  return fmt::format(
      "sampled: {} gaps of 1000 records lost events (reconciled from the figures): {} frees and {} "
      "allocations "
      "missing at recorded addresses, {} gaps where bytes in use moved by events of unknown address (+{} B "
      "allocated, -{} B freed); the first before {}, {}, {}",
      gaps, frees, allocations, unexplained, in, out, at(a), at(b), at(e));
}

TEST(SampledCli, EveryCoreOfTheTpuV3ProfileReplaysWithItsLostEventsCounted) {
  ASSERT_TRUE(std::filesystem::exists(kTpu)) << kTpu << " is missing (../shared/profiler/README.md)";
  // Cores 1-3 ran the same program as each other, 5-7 as 4 (the same figures); core 0 differs a little.
  const std::string kCores1To3 =
      "address 2/452; chunk_size 452/452; bytes_in_use 288/1000; fragmentation 0/1000; peak_bytes_in_use 288/1000; ";
  const std::string kCores4To7 =
      "address 3/960; chunk_size 960/960; bytes_in_use 1000/1000; fragmentation 0/1000; peak_bytes_in_use 1000/1000; ";
  CoreWant want[8];
  want[0] = {"address 3/451; chunk_size 451/451; bytes_in_use 769/1000; fragmentation 84/1000; "
             "peak_bytes_in_use 812/1000; ",
             Note(0, 328, 103, 300, 275, 478691328, 715800576, 44, 47, 76)};
  for (int c = 1; c < 4; ++c) want[c] = {kCores1To3, Note(c, 351, 240, 318, 180, 219070464, 760807424, 44, 47, 76)};
  for (int c = 4; c < 8; ++c) want[c] = {kCores4To7, Note(c, 53, 708, 31, 24, 17825792, 99024896, 4, 86, 88)};
  for (int core = 0; core < 8; ++core) {
    const nlohmann::json j = Replay(kTpu, kTpuConfig, std::to_string(core));
    if (j.empty()) continue;
    EXPECT_EQ(RecordedFigureCounts(j), want[core].counts) << "core " << core;
    EXPECT_EQ(SampledNote(j), want[core].note) << "core " << core;
    EXPECT_EQ(j["stats"]["bytes_limit"], 16624123904) << core;
  }
}

// Cores 0-3 free more bytes at unknown addresses than the start state and the lost allocations
// left live at unknown addresses: the excess is said, and bytes in use reads that much higher.
TEST(SampledCli, BytesFreedAtUnknownAddressesBeyondTheUnknownChunksAreSaid) {
  const nlohmann::json j = Replay(kTpu, kTpuConfig, "1");
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(
      j["recording"]["start_state_notes"].back(),
      "309968896 B freed at unknown addresses found no unknown chunk left to free: bytes in use reads that "
      "much higher from then on");
}

TEST(SampledCli, AnAllowGrowthPoolsRegionsAreSizedByItsFragmentationReadings) {
  // 49/69 addresses when each region was the smallest spanning its chunks: the 76 MiB chunk at
  // 0x7f6bff800000 lies in a 512 MiB region (the largest free chunk drops from 512 to 436 MiB when
  // it is allocated), not a 128 MiB one (docs/formats/xplane.md).
  const nlohmann::json j = Replay(kSharedProfiles + "jax_mi300x_gemm_8gpu.xplane.pb", "bfc", "GPU_0_bfc");
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(RecordedFigureCounts(j),
            "address 69/69; chunk_size 138/138; bytes_in_use 138/138; fragmentation 138/138; "
            "peak_bytes_in_use 138/138; ");
}

// A TF profile recorded mid-run, its pool grown over regions 3 GiB apart
// (docs/formats/xplane.md). Before: 0/96 addresses, bytes in use 341504 B low
// and no fragmentation reading (the live bytes below 0x7f5ce2053600 were also
// counted past the region's end, the regions were sizes BFC's doubling never
// makes, and the pool of 513 MiB needs a 1 MiB first region).
TEST(SampledCli, AMidRunTensorFlowPoolIsRebuiltFromRegionsBfcCanMake) {
  const nlohmann::json j = Replay(kSharedProfiles + "tf_keras_2023_instance2.xplane.pb", "bfc", "GPU_0_bfc");
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(RecordedFigureCounts(j),
            "address 96/96; chunk_size 192/192; bytes_in_use 192/192; fragmentation 192/192; "
            "peak_bytes_in_use 192/192; ");
  EXPECT_EQ(j["recording"]["start_state_notes"][0],
            "the fragmentation readings' pool of 537919488 bytes is an odd number of MiB: regions grown from a "
            "1 MiB first one (first_region=1048576, as in TF 1.x-2.1), not REF's 2 MiB");
  EXPECT_EQ(j["recording"]["start_state_notes"][1],
            "the fragmentation readings say the pool held 537919488 bytes, less than the limit: regions grown on "
            "demand (allow_growth), 4 placed from the addresses and 2 the recording never touches (1048576 live "
            "bytes in them)");
  EXPECT_EQ(j["recording"]["settings_from_recording"],
            nlohmann::json({"allow_growth=true", "garbage_collection=true", "first_region=1048576"}));
}

}  // namespace
}  // namespace hbmsim::trace::xplane
