// `hbmsim convert` keeps in the header what a replay takes from the original
// recording (sim/cli/convert_command.cc): the allocator that ran the job, the
// device a replay picks, that device's recorded settings and limit. The
// converted file then replays as the original does, with no more flags; what
// a header cannot carry is one note each on stderr, with the flags that
// restore it. A header's own settings are checked when the recording opens.
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::testing {
namespace {

// The leading comment block.
std::string Header(const std::string& text) {
  size_t end = 0;
  while (end < text.size() && text[end] == '#') end = text.find('\n', end) + 1;
  return text.substr(0, end);
}

TEST(ConvertedRecordingCliTest, ASnapshotConvertedToHbtReplaysAsTheSnapshotDoes) {
  const std::string hbt = TempPath("h100.hbt");
  const CliRun c = RunHbmsim("convert " + kExpandableOomSnapshot + " " + hbt);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.err,
            "hbmsim convert: " + hbt +
                ": the recorded segment calls are kept as marks, which a replay does not act on: --check-recorded has no "
                "segments to compare, and a segment the job released stays cached\n");
  const std::string text = TempPath("h100.trace");
  ASSERT_EQ(RunHbmsim("convert " + hbt + " " + text).exit_code, 0);
  EXPECT_EQ(Header(ReadFile(text)),
            "# hbmsim-trace v1\n# source: torch-snapshot\n# generation: 4\n# devices: 0, 1, 2\n"
            "# allocator: torch\n# device: 1\n# allocator_settings: device_index=1 expandable_segments=true\n"
            "# allocator_settings.device_0: expandable_segments=true\n"
            "# allocator_settings.device_2: device_index=2 expandable_segments=true\n"
            "# device_bytes: 84298432512\n");

  const std::string orig_json = TempPath("orig.json");
  const std::string conv_json = TempPath("conv.json");
  const CliRun orig = RunHbmsim("replay " + kExpandableOomSnapshot + " --no-advice --json " + orig_json);
  const CliRun conv = RunHbmsim("replay " + hbt + " --no-advice --json " + conv_json);
  EXPECT_EQ(orig.exit_code, 1) << orig.err;
  EXPECT_EQ(conv.exit_code, 1) << conv.err;
  EXPECT_EQ(conv.err, "hbmsim replay: no --allocator: torch, named by the trace's # allocator (--allocator picks "
                      "another)\n");
  EXPECT_NE(conv.out.find("1 of 200 allocations failed on device 1 with torch under the limit 84298432512 B"),
            std::string::npos)
      << conv.out;
  const nlohmann::json o = nlohmann::json::parse(ReadFile(orig_json));
  const nlohmann::json v = nlohmann::json::parse(ReadFile(conv_json));
  EXPECT_EQ(v["allocator"]["options"], o["allocator"]["options"]);
  EXPECT_EQ(v["allocator"]["bytes_limit"], o["allocator"]["bytes_limit"]);
  EXPECT_EQ(v["allocator"]["bytes_limit_source"], "the trace's # device_bytes");
  EXPECT_EQ(v["stats"], o["stats"]);
  EXPECT_EQ(v["summary"]["allocs"], 200);
  EXPECT_EQ(v["summary"]["failures"], 1);

  // Every other device takes its own settings, and no limit (it recorded no
  // OOM), as the original's does: the job's PYTORCH_CUDA_ALLOC_CONF was the
  // whole process's.
  for (const int dev : {0, 2}) {
    SCOPED_TRACE(dev);
    const std::string conv_dev = TempPath("conv_dev.json");
    const std::string orig_dev = TempPath("orig_dev.json");
    const std::string flags = " --device " + std::to_string(dev) + " --no-advice --json ";
    ASSERT_EQ(RunHbmsim("replay " + hbt + flags + conv_dev).exit_code, 0);
    ASSERT_EQ(RunHbmsim("replay " + kExpandableOomSnapshot + flags + orig_dev).exit_code, 0);
    const nlohmann::json d = nlohmann::json::parse(ReadFile(conv_dev));
    const nlohmann::json e = nlohmann::json::parse(ReadFile(orig_dev));
    EXPECT_EQ(d["allocator"]["bytes_limit_source"], "none: unlimited (the recording records no OOM)");
    EXPECT_EQ(d["allocator"]["options"]["expandable_segments"], true);
    EXPECT_EQ(d["allocator"]["options"]["device_index"], dev);
    EXPECT_EQ(d["allocator"]["options"], e["allocator"]["options"]);
    EXPECT_EQ(d["stats"], e["stats"]);
  }
}

// A snapshot's start state becomes allocations at the start: the converted
// file replays as the snapshot does under --start-state place.
TEST(ConvertedRecordingCliTest, AStartStateIsPlacedAndSaidSo) {
  const std::string snapshot = "../shared/torch_snapshots/gen2_no_time_us.pickle";
  const std::string hbt = TempPath("gen2.hbt");
  const CliRun c = RunHbmsim("convert " + snapshot + " " + hbt);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.err, "hbmsim convert: " + hbt +
                       ": the start state's 63 segments are not kept, only their live blocks, as allocations at the "
                       "start (tag=preexisting): it replays as the original does with --start-state place\n"
                       "hbmsim convert: " + hbt +
                       ": the recorded segment calls are kept as marks, which a replay does not act on: "
                       "--check-recorded has no segments to compare, and a segment the job released stays cached\n");
  const std::string orig_json = TempPath("orig.json");
  const std::string conv_json = TempPath("conv.json");
  ASSERT_EQ(RunHbmsim("replay " + snapshot + " --start-state place --json " + orig_json).exit_code, 0);
  ASSERT_EQ(RunHbmsim("replay " + hbt + " --json " + conv_json).exit_code, 0);
  const nlohmann::json o = nlohmann::json::parse(ReadFile(orig_json));
  const nlohmann::json v = nlohmann::json::parse(ReadFile(conv_json));
  EXPECT_EQ(v["summary"], o["summary"]);
  EXPECT_EQ(v["stats"], o["stats"]);
  EXPECT_EQ(v["allocator"], o["allocator"]);
}

TEST(ConvertedRecordingCliTest, ASnapshotWithoutATraceConvertsToNothingAndSaysWhereItsStateIs) {
  const std::string snapshot = "../shared/torch_snapshots/state_only_tiny.pickle";
  const std::string text = TempPath("tiny.trace");
  const CliRun c = RunHbmsim("convert " + snapshot + " " + text);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.err, "hbmsim convert: " + text + ": " + snapshot + " holds no events, so neither does it (`hbmsim inspect " +
                       snapshot + "` reads the state it holds)\n");
  EXPECT_EQ(ReadFile(text),
            "# hbmsim-trace v1\n# source: torch-snapshot\n# generation: 4\n# devices: none\n# allocator: torch\n");
}

// A profile's GPU allocator ran with garbage collection on (and region
// coalescing off, the default); its host allocator grew on demand. The header keeps the
// GPU's, the device a replay picks, and the host allocator's as its own.
TEST(ConvertedRecordingCliTest, AProfileKeepsItsDevicesSettings) {
  const std::string text = TempPath("tf.trace");
  const CliRun c = RunHbmsim("convert " + kKerasFitProfile + " " + text);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.err.find("settings"), std::string::npos) << c.err;
  EXPECT_NE(Header(ReadFile(text)).find("# allocator: bfc\n# device: 0\n"
                                        "# allocator_settings: garbage_collection=true\n"
                                        "# allocator_settings.device_1: allow_growth=true\n"
                                        "# device_bytes.device_1: 68719476736\n"),
            std::string::npos)
      << Header(ReadFile(text));
  const std::string host_json = TempPath("host.json");
  ASSERT_EQ(RunHbmsim("replay " + text + " --device 1 --json " + host_json).exit_code, 0);
  const nlohmann::json host = nlohmann::json::parse(ReadFile(host_json));
  EXPECT_EQ(host["allocator"]["options"]["allow_growth"], true);
  EXPECT_EQ(host["allocator"]["options"]["garbage_collection"], false);
  EXPECT_EQ(host["allocator"]["bytes_limit"], 68719476736);
  EXPECT_EQ(host["allocator"]["bytes_limit_source"], "the trace's # device_bytes.device_1");
  const CliRun size = RunHbmsim("size " + text);
  ASSERT_EQ(size.exit_code, 0) << size.err;
  EXPECT_NE(size.out.find("  settings:         garbage_collection=true (from the recording)\n"),
            std::string::npos)
      << size.out;
  EXPECT_NE(size.out.find("  min bytes_limit:  61631536 (58.78MiB)\n"), std::string::npos) << size.out;
}

// Without --bytes-limit, `advise` checks each change at the limit the job ran
// under, wherever the recording says it: a profile's stated limit, a
// converted snapshot's # device_bytes (its original's OOM capacity).
TEST(ConvertedRecordingCliTest, AdviseChecksAtTheLimitTheRecordingStates) {
  const CliRun profile = RunHbmsim("advise " + kKerasFitProfile);
  ASSERT_EQ(profile.exit_code, 0) << profile.err;
  EXPECT_NE(profile.out.find("\n  limit L:         14648653952 (13.64GiB) from the recording's bytes_allocated + "
                             "bytes_available + bytes_reserved of GPU_0_bfc\n  today's minimum: 61631536 (58.78MiB); "
                             "at L: yes\n"),
            std::string::npos)
      << profile.out;
  const std::string hbt = TempPath("h100.hbt");
  ASSERT_EQ(RunHbmsim("convert " + kExpandableOomSnapshot + " " + hbt).exit_code, 0);
  const CliRun converted = RunHbmsim("advise " + hbt);
  ASSERT_EQ(converted.exit_code, 0) << converted.err;
  EXPECT_NE(converted.out.find("\n  limit L:         84298432512 (78.51GiB) from the trace's # device_bytes\n"
                               "  today's minimum: 89508544724 (83.36GiB); at L: no (1 fail)\n"),
            std::string::npos)
      << converted.out;
}

TEST(ConvertedRecordingCliTest, AHeaderThatCannotBeTakenIsOneLine) {
  const auto run = [](const std::string& name, const std::string& header, const std::string& flags) {
    const std::string path = TempPath(name);
    WriteFile(path, "# hbmsim-trace v1\n" + header + "alloc 1 100\nfree 1\n");
    const CliRun r = RunHbmsim("replay " + path + " --bytes-limit 1MiB " + flags);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    return r.err.substr(r.err.find(path) + path.size());
  };
  EXPECT_EQ(run("a.trace", "# allocator: torch\n# allocator_settings: expandable_segments=true bogus=1\n", ""),
            ": metadata allocator_settings: torch has no option 'bogus'\n");
  EXPECT_EQ(run("b.trace", "# allocator: torch\n# allocator_settings: expandable_segments=maybe\n", ""),
            ": metadata allocator_settings: expandable_segments: expected true or false\n");
  EXPECT_EQ(run("c.trace", "# allocator: torch\n# allocator_settings: expandable_segments\n", ""),
            ": metadata allocator_settings: 'expandable_segments' is not KEY=VALUE\n");
  EXPECT_EQ(run("d.trace", "# allocator_settings: expandable_segments=true\n", "--allocator torch"),
            ": metadata allocator_settings: the settings of no allocator hbmsim models: # allocator must name one "
            "(best_fit, bfc, cuda_async, first_fit, ideal, offline, paged, torch, tpu)\n");
  EXPECT_EQ(run("e.trace", "# device: one\n", "--allocator bfc"), ": metadata device: 'one' is not a decimal number\n");
  EXPECT_EQ(run("g.trace", "# allocator: torch\n# allocator_settings.device_3: bogus=1\n", ""),
            ": metadata allocator_settings.device_3: torch has no option 'bogus'\n");
  EXPECT_EQ(run("f.trace", "# allocator: jemalloc\n", ""),
            " (text) does not say which allocator ran the job that hbmsim models (its # allocator: jemalloc is none "
            "of them) (built-in: best_fit, bfc, cuda_async, first_fit, ideal, offline, paged, torch, tpu; or a "
            ".yaml config file)\n");
}

// A device's own limit is taken for that device alone, and checked where it
// is taken.
TEST(ConvertedRecordingCliTest, EachDeviceTakesItsOwnLimit) {
  const std::string path = TempPath("limits.trace");
  WriteFile(path, "# hbmsim-trace v1\n# device: 1\n# device_bytes: 1000\n# device_bytes.device_0: 4096\n"
                  "# device_bytes.device_2: lots\nalloc 1 100\nfree 1\nalloc 2 100 device=1\nfree 2 device=1\n"
                  "alloc 3 100 device=2\nfree 3 device=2\n");
  const auto limit_line = [&](const std::string& flags) {
    const CliRun r = RunHbmsim("replay " + path + " --allocator bfc" + flags);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const size_t at = r.out.find("  limit:");
    return at == std::string::npos ? r.out : r.out.substr(at, r.out.find('\n', at) - at);
  };
  EXPECT_EQ(limit_line(""), "  limit:      1000 (1000B) from the trace's # device_bytes");
  EXPECT_EQ(limit_line(" --device 0"), "  limit:      4096 (4.0KiB) from the trace's # device_bytes.device_0");
  const CliRun bad = RunHbmsim("replay " + path + " --allocator bfc --device 2");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "hbmsim replay: " + path +
                         ": metadata device_bytes.device_2: 'lots' is not a size (plain bytes, or a number with B, "
                         "KiB, MiB, GiB, TiB, PiB, KB, MB, GB or TB)\n");
}

// The header's settings are its allocator's options: a replay under another
// policy takes none of them, and the report says where they came from.
TEST(ConvertedRecordingCliTest, TheHeadersSettingsAreOnlyItsAllocators) {
  const std::string path = TempPath("t.trace");
  WriteFile(path, "# hbmsim-trace v1\n# allocator: torch\n# allocator_settings: expandable_segments=true\n"
                  "alloc 1 100\nfree 1\n");
  const std::string json = TempPath("t.json");
  const CliRun torch = RunHbmsim("replay " + path + " --json " + json);
  ASSERT_EQ(torch.exit_code, 0) << torch.err;
  EXPECT_NE(torch.out.find("\n  settings:     expandable_segments=true (from the recording)\n"), std::string::npos)
      << torch.out;
  const nlohmann::json t = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(t["allocator"]["options"]["expandable_segments"], true);
  EXPECT_EQ(t["allocator"]["bytes_limit_source"], "none: unlimited (the recording records no OOM)");
  const CliRun bfc = RunHbmsim("replay " + path + " --allocator bfc --bytes-limit 1MiB");
  ASSERT_EQ(bfc.exit_code, 0) << bfc.err;
  EXPECT_NE(bfc.out.find("\n  settings:     none taken from the recording\n"), std::string::npos) << bfc.out;
}

}  // namespace
}  // namespace hbmsim::testing
