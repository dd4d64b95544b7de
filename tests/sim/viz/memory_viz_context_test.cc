// End to end through HBMSIM_BINARY (issue 17 item 2): what an export carries
// from the recording besides numbers — categories (with `unknown`, which the
// viewer needs), time_us, user metadata, compile context, annotations — and
// which addresses it says it shows (--memory-viz-addresses).
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::testing {
namespace {

nlohmann::json Export(const std::string& input, const std::string& flags, int exit_code = 0) {
  const std::string out = TempPath("export.json");
  const CliRun run = RunHbmsim("replay " + input + " " + flags + " --memory-viz " + out);
  EXPECT_EQ(run.exit_code, exit_code) << run.err;
  return run.exit_code <= 1 ? nlohmann::json::parse(ReadFile(out)) : nlohmann::json();
}

// Tags are categories; an alloc without one, and every segment entry, say
// `unknown`, so the legend holds it and the viewer loads the file.
TEST(MemoryVizContext, TagsBecomeCategoriesBesideUnknown) {
  const std::string trace = TempPath("tags.trace");
  WriteFile(trace,
            "# hbmsim-trace v1\n"
            "alloc 1 1048576 tag=weights t=1000\n"
            "alloc 2 4096 t=2000\n"
            "free 1 t=3000\n");
  const nlohmann::json j = Export(trace, "--allocator bfc --bytes-limit 64MiB");
  std::map<std::string, std::string> by_action;
  std::string times;
  for (const auto& e : j["device_traces"][0]) {
    by_action[e["action"].get<std::string>() + "@" + std::to_string(e["addr"].get<uint64_t>())] =
        e["category"];
    times += e.contains("time_us") ? std::to_string(e["time_us"].get<uint64_t>()) + " " : "- ";
  }
  EXPECT_EQ(by_action, (std::map<std::string, std::string>{{"alloc@0", "weights"},
                                                           {"alloc@1048576", "unknown"},
                                                           {"free_completed@0", "weights"},
                                                           {"free_requested@0", "weights"},
                                                           {"segment_alloc@0", "unknown"}}));
  EXPECT_EQ(times, "1000 1000 2000 3000 3000 ");
}

// gen5 records user_metadata '' and compile_context 'N/A' on every entry,
// time_us everywhere and two annotations of device 0: the export keeps the
// context and the times (an empty user_metadata stays absent, as the
// viewer prints nothing for it) and the annotations.
TEST(MemoryVizContext, RecordingContextCarriesOver) {
  const nlohmann::json j = Export(kTorchSnapshotDir + "gen5_user_metadata_compile_context.pickle",
                                  "--allocator torch --check-recorded");
  int entries = 0, with_time = 0, with_context = 0, with_metadata = 0, with_category = 0;
  for (const auto& e : j["device_traces"][0]) {
    ++entries;
    with_time += e.contains("time_us");
    with_context += e.value("compile_context", "") == "N/A";
    with_metadata += e.contains("user_metadata");
    with_category += e.contains("category");
  }
  EXPECT_EQ(entries, 6486);
  EXPECT_EQ(with_time, 6486);
  EXPECT_EQ(with_context, 6486);
  EXPECT_EQ(with_metadata, 0);
  EXPECT_EQ(with_category, 0);
  EXPECT_EQ(j["external_annotations"],
            nlohmann::json::parse(R"([{"stage":"START","name":"Optimizer.step#AdamW.step","device":0,)"
                                  R"("time_us":1773270053883781},{"stage":"END","name":)"
                                  R"("Optimizer.step#AdamW.step","device":0,"time_us":1773270053896695}])"));
  EXPECT_EQ(j["allocator_settings"]["hbmsim_addresses"], "recorded");
}

// A snapshot replayed by torch puts new segments at their recorded bases, so
// every alloc lands at its recorded address, with --check-recorded or not.
// Under bfc memory starts at offset 0 and no alloc does: `recorded` is
// refused, as it is for a trace that records no address at all.
TEST(MemoryVizContext, AddressesShown) {
  const std::string small = kTorchSnapshotDir + "small_trace_from_empty.pickle --allocator torch";
  EXPECT_EQ(Export(small, "--check-recorded --memory-viz-addresses recorded")["allocator_settings"]
                  ["hbmsim_addresses"],
            "recorded");
  EXPECT_EQ(Export(small, "--check-recorded --memory-viz-addresses simulated")["allocator_settings"]
                  ["hbmsim_addresses"],
            "simulated");
  EXPECT_EQ(Export(small, "")["allocator_settings"]["hbmsim_addresses"], "recorded");
  const std::string bfc = kTorchSnapshotDir + "small_trace_from_empty.pickle --allocator bfc --bytes-limit 8GiB";
  EXPECT_EQ(Export(bfc, "")["allocator_settings"]["hbmsim_addresses"],
            "simulated (0 of 36 recorded allocs were placed at their recorded address)");
  const CliRun refused =
      RunHbmsim("replay " + bfc + " --memory-viz-addresses recorded --memory-viz " + TempPath("r.json"));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(refused.err,
            "hbmsim replay: --memory-viz-addresses recorded: 0 of 36 recorded allocs were placed at their "
            "recorded address; show the simulated ones (--memory-viz-addresses simulated) or replay with "
            "--check-recorded\n");
  const CliRun no_addr = RunHbmsim(
      "replay configs/examples/fragmentation.trace --allocator bfc --memory-viz-addresses recorded "
      "--memory-viz " +
      TempPath("f.json"));
  EXPECT_EQ(no_addr.exit_code, 2);
  EXPECT_EQ(no_addr.err,
            "hbmsim replay: --memory-viz-addresses recorded: 0 of 0 recorded allocs were placed at their "
            "recorded address (the trace records no addr=); show the simulated ones (--memory-viz-addresses "
            "simulated)\n");
}

}  // namespace
}  // namespace hbmsim::testing
