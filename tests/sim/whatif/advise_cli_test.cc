// End to end: `hbmsim advise` on a generated training job, fraction settings,
// and the advice section `hbmsim replay` adds after a failure.
#include <map>
#include <string>

#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim {
namespace {

using testing::ReadFile;
using testing::RunHbmsim;
using testing::TempPath;

uint64_t MinLimit(const std::string& recording, const std::string& args) {
  const std::string json = TempPath("advise_gen_size.json");
  const testing::CliRun s = RunHbmsim("size " + recording + " " + args + " --jobs 2 --json " + json);
  EXPECT_EQ(s.exit_code, 0) << s.err;
  return nlohmann::json::parse(ReadFile(json))["min_bytes_limit"].get<uint64_t>();
}

// A generated training step (weights, optimizer states, activations, grad
// buckets): every advised line's minimum limit is what `size` finds with the
// same setting, so the advice and `size` cannot drift apart.
TEST(AdviseCliTest, OnAGeneratedTrainingTraceEachLineIsSizeWithThatSetting) {
  const std::string trace = TempPath("advise_training.trace");
  const testing::CliRun g = RunHbmsim("gen training -o " + trace +
                                      " --seed 7 --layers 4 --hidden 1024 --seq 512 --batch 4 --steps 2");
  ASSERT_EQ(g.exit_code, 0) << g.err;
  const std::string json = TempPath("advise_training.json");
  const testing::CliRun r = RunHbmsim("advise " + trace + " --allocator torch --jobs 2 --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  const std::map<std::string, std::string> set_for = {
      {"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "--set expandable_segments=true"},
      {"PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128", "--set max_split_size=128MiB"},
      {"PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "--set max_split_size=512MiB"},
      {"PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.6", "--set garbage_collection_threshold=0.6"},
      {"PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:4", "--set roundup_power2_divisions=4"},
      {"PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:8", "--set alloc_conf=roundup_power2_divisions:8"},
  };
  ASSERT_EQ(j["candidates"].size(), set_for.size()) << j.dump(2);
  EXPECT_EQ(j["today"]["min_bytes_limit"].get<uint64_t>(), MinLimit(trace, "--allocator torch"));
  for (const nlohmann::json& c : j["candidates"]) {
    const std::string how = c["how"];
    ASSERT_TRUE(set_for.count(how)) << how;
    EXPECT_EQ(c["min_bytes_limit"].get<uint64_t>(), MinLimit(trace, "--allocator torch " + set_for.at(how))) << how;
  }
}

// With the device's memory, each minimum limit is also the policy's fraction
// setting, rounded up: 288 MiB of 1 GiB is 0.28125, so 0.29 (today's, and
// allow_growth's, which needs the same limit).
// cuda_async has no fraction setting, so no line.
TEST(AdviseCliTest, DeviceMemorySaysEachMinimumAsTheFractionSetting) {
  const std::string json = TempPath("advise_fraction.json");
  const testing::CliRun r =
      RunHbmsim("advise configs/examples/fragmentation.trace --allocator configs/bfc_tensorflow.yaml "
                "--bytes-limit 256MiB --device-memory 1GiB --jobs 2 --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nEach minimum limit as a fraction of the device's 1.00GiB (1073741824 B):\n"
                       "  today                                                                      "
                       "XLA_PYTHON_CLIENT_MEM_FRACTION=0.29 (JAX); TF: GPUOptions.per_process_gpu_memory_fraction=0.29\n"
                       "  TF_FORCE_GPU_ALLOW_GROWTH=true (JAX: XLA_PYTHON_CLIENT_PREALLOCATE=false)  "
                       "XLA_PYTHON_CLIENT_MEM_FRACTION=0.29 (JAX); TF: GPUOptions.per_process_gpu_memory_fraction=0.29\n\n"),
            std::string::npos)
      << r.out;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["device_memory"], 1073741824u);
  EXPECT_EQ(j["today"]["limit_setting"],
            "XLA_PYTHON_CLIENT_MEM_FRACTION=0.29 (JAX); TF: GPUOptions.per_process_gpu_memory_fraction=0.29");
  EXPECT_EQ(j["candidates"][0]["how"], "TF_GPU_ALLOCATOR=cuda_malloc_async");
  EXPECT_TRUE(j["candidates"][0]["limit_setting"].is_null());
  const testing::CliRun bad = RunHbmsim("advise configs/examples/fragmentation.trace --allocator bfc --device-memory 0");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "hbmsim advise: --device-memory 0: must be more than 0\n");
}

// The H100 snapshot's OOM states the device's capacity, so it is the default
// device memory; no minimum fits in it, which is said once.
TEST(AdviseCliTest, TheRecordedCapacityIsTheDefaultDeviceMemory) {
  const testing::CliRun r = RunHbmsim("advise ../shared/torch_snapshots/h100x4_expandable_segments_oom.pickle "
                                      "--allocator torch --device 1 --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nAs a fraction of the device's 78.51GiB (84298432512 B): none; every minimum limit is "
                       "more than the whole device.\n"),
            std::string::npos)
      << r.out;
  // Its expandable_segments:False line is what `size` finds with that setting.
  EXPECT_EQ(MinLimit("../shared/torch_snapshots/h100x4_expandable_segments_oom.pickle",
                     "--allocator torch --device 1 --set expandable_segments=false"),
            94826922196u);
  EXPECT_NE(r.out.find("94826922196 (88.31GiB)      costs 4.95GiB  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False"),
            std::string::npos);
  // The replay of the same OOM says it too, in its "What would fit" section.
  const testing::CliRun replay = RunHbmsim("replay ../shared/torch_snapshots/h100x4_expandable_segments_oom.pickle "
                                           "--allocator torch --device 1 --jobs 2");
  EXPECT_EQ(replay.exit_code, 1) << replay.err;
  EXPECT_NE(replay.out.find("  no setting can fit at L: the job's peak live bytes, 89372046292 (83.23GiB), exceed it "
                            "by 5073613780 (4.72GiB); the job itself must hold less at its peak\n"),
            std::string::npos)
      << replay.out;
}

// A recording that began with more reserved than its job ever holds live:
// every setting needs that memory, and the advice says so instead of leaving
// a table of "same" to be read. A table whose lines differ says nothing.
TEST(AdviseCliTest, WhenTheStartStateDecidesTheAdviceSaysSo) {
  const testing::CliRun r = RunHbmsim("advise ../shared/torch_snapshots/gen1_history_addresses.pickle --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nEvery setting needs the same: the recording began with 1851785216 (1.72GiB) already "
                       "reserved (what the allocator held before its first recorded event), more than the job's own "
                       "peak live bytes (809849328 (772.33MiB)); a setting changes only what is placed after that.\n"),
            std::string::npos)
      << r.out;
  // A replay whose limit is below that memory says it in its "What would fit" section, for the
  // generic "no setting fits at L" line.
  const testing::CliRun replay =
      RunHbmsim("replay ../shared/torch_snapshots/gen1_history_addresses.pickle --bytes-limit 1.5GiB --jobs 2");
  EXPECT_EQ(replay.exit_code, 1) << replay.err;
  EXPECT_NE(replay.out.find("  every setting needs the same: the recording began with 1851785216 (1.72GiB) already "
                            "reserved (what the allocator held before its first recorded event), more than the job's "
                            "own peak live bytes (809849328 (772.33MiB))\n\nFrom a fresh start at L = 1610612736 (1.50GiB): "
                            "a new run of the job"),
            std::string::npos)
      << replay.out;
  const testing::CliRun h100 = RunHbmsim("advise ../shared/torch_snapshots/h100x4_expandable_segments_oom.pickle "
                                         "--jobs 2");
  ASSERT_EQ(h100.exit_code, 0) << h100.err;
  EXPECT_EQ(h100.out.find("Every setting needs the same"), std::string::npos) << h100.out;
}

// After a failure `replay` says what would fit, as `advise` does, in the text
// and the JSON; --no-advice and --quiet leave it out; a clean replay has none.
TEST(ReplayAdviceTest, AFailedReplaySaysWhatWouldFit) {
  const std::string json = TempPath("replay_advice.json");
  const std::string replay =
      "replay configs/examples/fragmentation.trace --allocator configs/bfc_tensorflow.yaml --bytes-limit 256MiB ";
  const testing::CliRun r = RunHbmsim(replay + "--jobs 2 --json " + json);
  ASSERT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("\nWhat would fit at L = 268435456 (256.00MiB): each setting the allocator offers, replayed "
                       "(as `hbmsim advise`)\n"
                       "  today's minimum limit: 301989888 (288.00MiB)\n"
                       "  fits at L                     min limit           vs today  setting\n"
                       "  yes               268435456 (256.00MiB)     saves 32.00MiB  TF_GPU_ALLOCATOR=cuda_malloc_async\n"
                       "  no (1 fail)       301989888 (288.00MiB)               same  TF_FORCE_GPU_ALLOW_GROWTH=true "
                       "(JAX: XLA_PYTHON_CLIENT_PREALLOCATE=false)\n\nhbmsim replay\n"),
            std::string::npos)
      << r.out;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["advice"]["today"]["min_bytes_limit"], 301989888u);
  EXPECT_EQ(j["advice"]["candidates"][0]["how"], "TF_GPU_ALLOCATOR=cuda_malloc_async");
  EXPECT_EQ(j["advice"]["candidates"][0]["fits_at_limit"], true);

  for (const std::string flag : {"--no-advice", "--quiet"}) {
    const testing::CliRun off = RunHbmsim(replay + flag);
    EXPECT_EQ(off.exit_code, 1) << off.err;
    EXPECT_EQ(off.out.find("What would fit"), std::string::npos) << flag;
  }
  const testing::CliRun zero = RunHbmsim(replay + "--jobs 0");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_EQ(zero.err, "hbmsim replay: --jobs 0: must be at least 1\n");
  const testing::CliRun fits = RunHbmsim(
      "replay configs/examples/fragmentation.trace --allocator configs/bfc_tensorflow.yaml --bytes-limit 512MiB");
  EXPECT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_EQ(fits.out.find("What would fit"), std::string::npos);
}

}  // namespace
}  // namespace hbmsim
