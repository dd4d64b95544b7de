// End to end on the shared profiles: `hbmsim replay --check-recorded` with
// the match counts of every measure, `--device` by name, `convert`, and a cut
// profile as one line on stderr with exit 2.
#include <algorithm>
#include <sstream>
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
using ::hbmsim::testing::WriteFile;

// The name of the device the replay chose.
std::string DeviceName(const nlohmann::json& j) {
  for (const nlohmann::json& d : j["recording"]["devices"]) {
    if (d["device"] == j["recording"]["device"]) return d["name"];
  }
  return "";
}

nlohmann::json Check(const std::string& file, const std::string& device) {
  const std::string json = TempPath("check.json");
  const auto run = RunHbmsim("replay " + kSharedProfiles + file + " --allocator bfc --check-recorded --json " + json +
                             (device.empty() ? "" : " --device " + device));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return nlohmann::json::parse(ReadFile(json));
}

TEST(XplaneCli, TensorFlowGpuAllocatorIsReproducedExactly) {
  for (const char* file : {"tf_t4_keras_fit.xplane.pb", "tf_t4_keras_fit.memory_profile.json.gz"}) {
    const nlohmann::json j = Check(file, "");
    EXPECT_EQ(RecordedFigureCounts(j),
              "address 77/77; chunk_size 154/154; bytes_in_use 154/154; fragmentation 154/154; "
              "peak_bytes_in_use 154/154; ")
        << file;
    EXPECT_EQ(DeviceName(j), "GPU_0_bfc");
    EXPECT_EQ(j["recording"]["recorded_limit"]["limit"], 14648653952);
    EXPECT_EQ(j["stats"]["bytes_limit"], 14648653952);
    EXPECT_EQ(j["allocator"]["bytes_limit_source"],
              "the recording's bytes_allocated + bytes_available + bytes_reserved of GPU_0_bfc");
    // The 77 records and the three start-state allocs that carry addr=.
    EXPECT_EQ(j["recorded_check"]["allocs_matched"], 80);
    EXPECT_EQ(j["recorded_check"]["allocs_total"], 80);
    // allow_growth=false and region_coalescing=false (TF's regions come from cudaMalloc) are the
    // defaults, so only garbage collection is listed.
    EXPECT_EQ(j["recording"]["settings_from_recording"], nlohmann::json({"garbage_collection=true"}));
  }
}

TEST(XplaneCli, TensorFlowHostAllocatorByName) {
  const nlohmann::json j = Check("tf_t4_keras_fit.xplane.pb", "gpu_host_bfc");
  // The one fragmentation mismatch: the recorded 0.000244798 = 256 / (1 MiB - 2816) says TF's
  // pinned-host pool was 1 MiB; REF's allow_growth starts with 2 MiB (docs/formats/xplane.md).
  EXPECT_EQ(RecordedFigureCounts(j),
            "address 3/3; chunk_size 6/6; bytes_in_use 6/6; fragmentation 5/6; peak_bytes_in_use 6/6; ");
  EXPECT_EQ(
      j["recording"]["recorded_figures"]["fragmentation"]["first_mismatch"],
      "event 73 (MemoryDeallocation planes[0] \"/host:CPU\" lines[5] \"tf_GPU_Event_Manager/-932893269\" "
      "events[1]): recorded 0.000244798, simulated 0.000122234");
  EXPECT_EQ(j["recording"]["device"], 1);
  EXPECT_EQ(j["recording"]["device_reason"], "--device");
  EXPECT_EQ(j["stats"]["bytes_limit"], 68719476736);
}

TEST(XplaneCli, JaxGpuAllocatorGrownOnDemandIsReproducedExactly) {
  // JAX did not preallocate here: the fragmentation readings fit a pool of 1026 MiB, not the limit, so the
  // start state is five regions placed from the addresses plus two never touched (docs/formats/xplane.md).
  const nlohmann::json j = Check("jax_mi300x_attention.xplane.pb", "GPU_0_bfc");
  EXPECT_EQ(RecordedFigureCounts(j),
            "address 126/126; chunk_size 252/252; bytes_in_use 252/252; fragmentation 252/252; "
            "peak_bytes_in_use 252/252; ");
  EXPECT_EQ(j["recording"]["settings_from_recording"], nlohmann::json({"allow_growth=true"}));
  EXPECT_EQ(
      j["recording"]["start_state_notes"][0],
      "the fragmentation readings say the pool held 1075838976 bytes, less than the limit: regions grown on "
      "demand (allow_growth), 5 placed from the addresses and 2 the recording never touches (33554432 live "
      "bytes in them)");
  // The fillers that lay the seven regions out hold the whole pool (1075838976 B) for a moment: not the
  // job's memory. The peak counts from the state the start events leave (metadata start_events), and so do
  // the allocator's stats (TF's ClearStats): 126 allocations, the profile's own.
  EXPECT_EQ(j["peak_live_bytes"], 343933444);
  EXPECT_EQ(j["summary"]["peak_live_event"], 89);
  EXPECT_EQ(j["memory"]["peak"]["held_bytes"], 343933444);
  for (const nlohmann::json& g : j["memory"]["peak"]["by_tag"]) EXPECT_NE(g["key"], "start_region") << g;
  EXPECT_EQ(j["stats"]["num_allocs"], 126);
  EXPECT_EQ(j["summary"]["allocs"], 145);
  EXPECT_EQ(j["summary"]["start_state_allocs"], 19);
  EXPECT_EQ(j["stats"]["peak_bytes_in_use"], 452985344);
  EXPECT_EQ(j["stats"]["pool_bytes"], 1075838976);
}

// The outcome says which of its allocations built the start state.
TEST(XplaneCli, TheOutcomeNamesTheStartStatesAllocations) {
  const auto run = RunHbmsim("replay " + kSharedProfiles + "tf_t4_keras_fit.xplane.pb");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("  outcome:    0 of 83 allocations failed (0 oom, 0 fragmentation)\n"
                         "              6 of them build the state the recording began in (its start state); the "
                         "peak and the allocator's stats count from there\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("NumAllocs:                          77\n"), std::string::npos) << run.out;
}

// The viewers start where the job does: the HTML map at the peak of bytes in
// use counts from the start state on, and --memory-viz writes no trace entry
// for the fillers that lay it out (its segments hold the state from the start).
TEST(XplaneCli, TheViewersStartAfterTheStartState) {
  const std::string html = TempPath("jax.html");
  const std::string viz = TempPath("jax_viz.json");
  const auto run = RunHbmsim("replay " + kSharedProfiles + "jax_mi300x_attention.xplane.pb --html " + html + " --memory-viz " + viz);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(ReadFile(html).find("at the peak of bytes in use (432.00MiB, event 170)"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(ReadFile(viz));
  EXPECT_EQ(j["segments"].size(), 7u);
  ASSERT_EQ(j["device_traces"][0].size(), 378u);  // 434 with the fillers' 56
  EXPECT_EQ(j["device_traces"][0][0]["size"], 16777216);  // the profile's first record
  EXPECT_EQ(j["device_traces"][0][0]["time_us"], 0);
}

TEST(XplaneCli, JaxHostAllocatorIsReproducedExactly) {
  const nlohmann::json j = Check("jax_mi300x_attention.xplane.pb", "1");
  EXPECT_EQ(DeviceName(j), "xla_gpu_host_bfc");
  EXPECT_EQ(RecordedFigureCounts(j),
            "address 18/18; chunk_size 36/36; bytes_in_use 36/36; fragmentation 36/36; "
            "peak_bytes_in_use 36/36; ");
}

TEST(XplaneCli, ConvertWritesTheProfileAsAText) {
  const std::string out = TempPath("tf.trace");
  const auto run = RunHbmsim("convert " + kSharedProfiles + "tf_t4_keras_fit.xplane.pb " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string text = ReadFile(out);
  EXPECT_NE(text.find("\nalloc 8 256 t=0 tag=SameWorkerRecvDone shape=u8[256] addr=0x7fce96296f00\n"),
            std::string::npos)
      << text.substr(0, 2000);
  // The text trace replays like the profile.
  const auto again = RunHbmsim("replay " + out +
                               " --allocator bfc --check-recorded --set garbage_collection=true");
  EXPECT_EQ(again.exit_code, 0) << again.err;
}

TEST(XplaneCli, ACutProfileIsOneLineWithTheByteOffset) {
  const std::string cut = TempPath("cut.xplane.pb");
  WriteFile(cut, ReadFile(kSharedProfiles + "tf_t4_keras_fit.xplane.pb").substr(0, 5000));
  const auto run = RunHbmsim("replay " + cut + " --allocator bfc");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err.rfind("hbmsim replay: " + cut + ": byte offset ", 0), 0u) << run.err;
  EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << run.err;
  const auto conv = RunHbmsim("convert " + cut + " " + TempPath("cut.trace"));
  EXPECT_EQ(conv.exit_code, 2);
  EXPECT_NE(conv.err.find("byte offset"), std::string::npos) << conv.err;
}

TEST(XplaneCli, AnUnknownDeviceNamesTheAllocators) {
  const auto run =
      RunHbmsim("replay " + kSharedProfiles + "jax_mi300x_attention.xplane.pb --allocator bfc --device TPU_0");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "hbmsim replay: --device TPU_0: " + kSharedProfiles +
                "jax_mi300x_attention.xplane.pb has no device of that name (devices: 0 (GPU_0_bfc), 1 "
                "(xla_gpu_host_bfc))\n");
}

TEST(XplaneCli, ADeviceNameOnATraceThatNamesNoDevices) {
  const std::string trace = std::string(HBMSIM_SOURCE_DIR) + "/configs/examples/fragmentation.trace";
  const auto run = RunHbmsim("replay " + trace + " --allocator bfc --bytes-limit 256MiB --device GPU_0_bfc");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "hbmsim replay: --device GPU_0_bfc: expected a device number (" + trace +
                         " does not name its devices)\n");
}

TEST(XplaneCli, DiagnoseAProfile) {
  const std::string json = TempPath("diag.json");
  const std::string html = TempPath("diag.html");
  const auto run =
      RunHbmsim("diagnose " + kSharedProfiles + "tf_t4_keras_fit.xplane.pb --json " + json + " --html " + html);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("GPU_0_bfc: 77 allocations, 77 deallocations"), std::string::npos) << run.out;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  const nlohmann::json& gpu = j["allocators"][0];
  EXPECT_EQ(gpu["allocator_name"], "GPU_0_bfc");
  EXPECT_EQ(gpu["peak_bytes"], 53543168);
  EXPECT_EQ(gpu["recorded_peak_bytes_in_use"], 107324160);
  EXPECT_EQ(gpu["at_peak_by_tf_op"][0]["tf_op"],
            "gradient_tape/sequential/conv2d_2/Conv2D/Conv2DBackpropFilter");
  EXPECT_EQ(gpu["at_peak_by_tf_op"][0]["bytes"], 31555584 + 1536 + 1536);
  // BFC's own fragmentation over time: every record's reading, its max, and both curves in the page.
  EXPECT_NE(
      run.out.find("BFC's fragmentation (1 - largest free chunk / free bytes of the pool): max 0.00121104 "
                   "at t=0.003938 s, at the end 5.48818e-05"),
      std::string::npos)
      << run.out;
  EXPECT_EQ(gpu["max_fragmentation"], 0.00121104);
  // Each tenth's row is timed at its end (the allocator is idle from 0.0047 s: the last six rows hold its
  // state then, each at its own time).
  EXPECT_NE(run.out.find("          0.003982 s      21986048  0.000553089\n"
                         "          0.004977 s       1913088  5.48818e-05\n"
                         "          0.005973 s       1913088  5.48818e-05\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("          0.009954 s       1913088  5.48818e-05\n\ngpu_host_bfc"), std::string::npos)
      << run.out;
  ASSERT_EQ(gpu["series_time_ps_in_use_fragmentation"].size(), 154u);
  EXPECT_EQ(gpu["series_time_ps_in_use_fragmentation"][0], nlohmann::json({0, 1913344, 5.48294e-05}));
  EXPECT_EQ(j["allocators"][1]["allocator_name"], "gpu_host_bfc");
  EXPECT_EQ(j["allocators"][1]["max_fragmentation"], 0.000244798);
  const std::string page = ReadFile(html);
  EXPECT_NE(page.find("<polyline"), std::string::npos);
  EXPECT_NE(page.find("fragmentation: max 0.00121104"), std::string::npos);
  EXPECT_NE(page.find("fragmentation: max 0.000244798"), std::string::npos);
}

// The text traces both forms of the TF run convert to, without the line naming the source file.
std::string ConvertedWithoutSource(const std::string& file) {
  const std::string out = TempPath(file + ".trace");
  const auto run = RunHbmsim("convert " + kSharedProfiles + file + " " + out);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  std::string kept;
  std::istringstream in(ReadFile(out));
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("# source")) kept += line + "\n";
  }
  return kept;
}

TEST(XplaneCli, TheMemoryProfileConvertsToTheSameTraceAsItsXSpace) {
  const std::string x = ConvertedWithoutSource("tf_t4_keras_fit.xplane.pb");
  const std::string j = ConvertedWithoutSource("tf_t4_keras_fit.memory_profile.json.gz");
  EXPECT_EQ(std::count(x.begin(), x.end(), '\n'), std::count(j.begin(), j.end(), '\n'));
  EXPECT_EQ(x, j);
  EXPECT_NE(x.find("\nalloc 8 256 t=0 tag=SameWorkerRecvDone"), std::string::npos) << x.substr(0, 2000);
}

// tests/data/xplane/tpu_sizeless_frees.xspace.txt: a TPU-shaped profile whose frees carry only their address.
TEST(XplaneCli, SizelessDeallocationsTakeTheSizeOfTheirAllocation) {
  const std::string pb = std::string(HBMSIM_SOURCE_DIR) + "/tests/data/xplane/tpu_sizeless_frees.xplane.pb";
  const std::string json = TempPath("tpu.json");
  const auto run = RunHbmsim("replay " + pb + " --allocator bfc --check-recorded --json " + json);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(DeviceName(j), "TPU_0");
  // Every address and every recorded chunk size (allocations only) reproduced; the bytes in use after
  // each of the six records too, so each free released the chunk its allocation took.
  EXPECT_EQ(RecordedFigureCounts(j),
            "address 3/3; chunk_size 3/3; bytes_in_use 6/6; fragmentation 0/0; peak_bytes_in_use 0/0; ");
  EXPECT_EQ(j["stats"]["bytes_limit"], 1048576);
  EXPECT_EQ(j["recording"]["start_state_notes"],
            nlohmann::json({"chunk sizes missing from records were inferred (its allocation's chunk, ...)"}));
  const std::string trace = TempPath("tpu.trace");
  ASSERT_EQ(RunHbmsim("convert " + pb + " " + trace).exit_code, 0);
  const std::string text = ReadFile(trace);
  EXPECT_NE(text.find("\nalloc 1 1000 t=0 addr=0x10000000\nalloc 2 2000 t=1 addr=0x10000400\nfree 1 t=2\n"),
            std::string::npos)
      << text;
}

TEST(XplaneCli, ACorruptedProfileIsOneLineWithTheByteOffset) {
  std::string bytes = ReadFile(kSharedProfiles + "tf_t4_keras_fit.xplane.pb");
  // An absent shared file is a failure naming it, never a write past the end.
  ASSERT_GE(bytes.size(), 2016u) << "cannot read " << kSharedProfiles << "tf_t4_keras_fit.xplane.pb";
  for (size_t i = 2000; i < 2016; ++i) bytes[i] = '\xff';  // a varint that never ends
  const std::string bad = TempPath("bad.xplane.pb");
  WriteFile(bad, bytes);
  const auto run = RunHbmsim("replay " + bad + " --allocator bfc");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err.rfind("hbmsim replay: " + bad + ": byte offset ", 0), 0u) << run.err;
  EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << run.err;
}

}  // namespace
}  // namespace hbmsim::trace::xplane
