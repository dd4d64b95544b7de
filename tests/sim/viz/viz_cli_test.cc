// End to end: `hbmsim replay --html/--perfetto` on the bundled examples, and
// the progress line under a pseudo-terminal. Files are checked the way users
// open them: the HTML as XML (python3), the trace as JSON.
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::testing {
namespace {

using Json = nlohmann::json;

bool HavePython() { return std::system("python3 -c 'import xml' >/dev/null 2>&1") == 0; }

struct Outputs {
  CliRun run;
  std::string html, perfetto;
  Json report;
};

Outputs ReplayFragmentation(const std::string& allocator) {
  Outputs o;
  o.html = TempPath("report.html");
  o.perfetto = TempPath("trace.json");
  const std::string json = TempPath("report.json");
  o.run = RunHbmsim("replay configs/examples/fragmentation.trace --allocator " + allocator + " --html " +
                    o.html + " --perfetto " + o.perfetto + " --json " + json);
  o.report = Json::parse(ReadFile(json));
  return o;
}

TEST(VizCli, HtmlIsWellFormedWithEverySeriesAndItsPeak) {
  const Outputs o = ReplayFragmentation("bfc");
  ASSERT_EQ(o.run.exit_code, 1) << o.run.err;
  const std::string html = ReadFile(o.html);
  EXPECT_EQ(o.report["stats"]["peak_bytes_in_use"], 268435456);
  EXPECT_NE(html.find("data-series=\"bytes_in_use\" data-peak=\"268435456\""), std::string::npos);
  EXPECT_NE(html.find("data-series=\"live_requested\" data-peak=\"268435456\""), std::string::npos);
  EXPECT_NE(html.find("data-series=\"pool_bytes\" data-peak=\"268435456\""), std::string::npos);
  EXPECT_NE(html.find("data-series=\"largest_free_block\""), std::string::npos);
  EXPECT_NE(html.find("Address space at the first failure (event 7, fragmentation of 96.00MiB)"),
            std::string::npos);
  EXPECT_NE(html.find("Address space at the peak of bytes in use (256.00MiB, event 3)"), std::string::npos);
  EXPECT_NE(html.find("data-kind=\"failures\""), std::string::npos);
  // The answer first, in plain words, then only the options that differ from the defaults (none here).
  EXPECT_NE(html.find("<h1>hbmsim replay of configs/examples/fragmentation.trace</h1>\n<p class=\"headline\" "
                      "id=\"verdict\">1 of 6 allocations failed with bfc under a limit of 256.00MiB. The first "
                      "asked for 96.00MiB at event 7, when 128.00MiB was free in all, enough, but in pieces: the "
                      "largest request that could have succeeded was 64.00MiB. It is fragmentation, not a full "
                      "device.</p>\n<p>allocator <b>bfc</b> (options: its defaults), limit"),
            std::string::npos)
      << html;
  // Drawings scale down to the window (readable at 1024 px); one name per measure.
  EXPECT_NE(html.find("class=\"timeline\" width=\"1280\" height=\"390\" viewBox=\"0 0 1280 390\""),
            std::string::npos);
  EXPECT_NE(html.find("<th>largest request that could succeed</th>"), std::string::npos);
  EXPECT_EQ(html.find("bytes_reserved (end)"), std::string::npos);  // bfc reserves nothing of its own
  // The verdict follows; the failure row carries the request's tag and the mark before it.
  EXPECT_NE(html.find("<pre class=\"verdict\">Verdict: 1 of 6 allocations failed on device 0 with bfc under the "
                      "limit 268435456 B (256.00MiB) (from the trace's # device_bytes)\n"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td>67108864</td><td class=\"l\">grad_buffer</td><td class=\"l\"></td>"
                      "<td class=\"l\">forward_end</td></tr>"),
            std::string::npos);
  // Where the memory went, as a stacked bar per moment with a legend, then what would fit.
  EXPECT_NE(html.find("<h2>Where the memory went</h2>\n"
                      "<h3>At the first failure (event 7): 128.00MiB held in 2 buffers, by tag</h3>\n"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<rect x=\"250.00\" y=\"0\" width=\"250.00\" height=\"28\" fill=\"#f28e2b\" "
                      "data-bytes=\"67108864\"><title>act_l2: 64.00MiB</title></rect>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td class=\"key\"><span style=\"background:#4e79a7\"></span></td><td class=\"l\">"
                      "act_l2</td><td>67108864</td><td>64.00MiB</td><td>50.0%</td><td>1</td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("outline:1px solid #999\"></span>unmapped (reserved addresses, no memory behind them)"),
            std::string::npos);
  EXPECT_NE(html.find("<h2>What would fit</h2>\n<pre>What would fit at L = 268435456 (256.00MiB)"),
            std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);  // self-contained, nothing to run or fetch
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find(" href="), std::string::npos);
  if (!HavePython()) GTEST_SKIP() << "python3 missing: the XML well-formedness check was skipped";
  const std::string cmd =
      "python3 -c 'import sys, xml.etree.ElementTree as E; t = E.parse(sys.argv[1]); "
      "n = sum(1 for e in t.iter() if e.get(\"class\") == \"series\"); sys.exit(0 if n == 4 else 1)' " +
      o.html;
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

TEST(VizCli, PerfettoHasCounterTracksAndTheExactPeak) {
  const Outputs o = ReplayFragmentation("bfc");
  const Json trace = Json::parse(ReadFile(o.perfetto));
  std::map<std::string, int64_t> max;
  std::vector<std::string> instants, slices, failure_details;
  for (const Json& e : trace["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "C") {
      const int64_t v = e["args"]["bytes"];
      max[e["name"]] = std::max(max[e["name"]], v);
    } else if (ph == "i") {
      instants.push_back(e["name"]);
      if (e["cat"] == "failure") failure_details.push_back(e["args"]["detail"]);
    } else if (ph == "X") {
      slices.push_back(e["name"]);
    }
  }
  ASSERT_EQ(max.size(), 4u);
  EXPECT_EQ(max["bytes_in_use"], o.report["stats"]["peak_bytes_in_use"].get<int64_t>());
  EXPECT_EQ(max["live_requested"], 268435456);
  EXPECT_EQ(max["largest_free_block"], 268435456);
  EXPECT_EQ(std::count(instants.begin(), instants.end(), "fragmentation"), 1);
  EXPECT_EQ(slices, std::vector<std::string>{"forward_end"});
  EXPECT_EQ(failure_details, std::vector<std::string>{"alloc id 5: 96.00MiB requested, 128.00MiB free, largest free "
                                                      "block 64.00MiB, tag=grad_buffer"});
}

// A replay long enough for a progress line: more events than the line's
// clock stride (4096), with HBMSIM_PROGRESS_AFTER=0 so it shows at the first
// look at the clock, however fast the build. Few buffers live at once: each
// new peak is explained by a walk of every block, so 4000 live ones made this
// small replay a second long, and 30 s under the sanitizers.
std::string ProgressTrace() {
  const std::string path = TempPath("progress.trace");
  std::string text = "# hbmsim-trace v1\n# device_bytes: 17179869184\n";
  for (int i = 0; i < 100; ++i) text += "alloc " + std::to_string(i) + " 4096\n";
  for (int r = 0; r < 60; ++r) {
    for (int i = 0; i < 100; ++i) {
      text += "free " + std::to_string(i) + "\nalloc " + std::to_string(i) + " 4096\n";
    }
  }
  WriteFile(path, text);
  return path;
}

TEST(VizCli, ProgressAppearsOnATerminalOnly) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "script (util-linux) missing";
  const std::string trace = ProgressTrace();
  const std::string log = TempPath("tty.log");
  // script gives hbmsim a pseudo-terminal on stdin, stdout and stderr.
  const std::string cmd = std::string("script -qec 'HBMSIM_PROGRESS_AFTER=0 ") + HBMSIM_BINARY + " replay " +
                          trace + " --allocator bfc' " + log + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const std::string tty = ReadFile(log);
  EXPECT_NE(tty.find("\rhbmsim: 4096 events, "), std::string::npos) << tty.substr(0, 400);
  EXPECT_NE(tty.find(" events/s"), std::string::npos) << tty.substr(0, 400);
  // Erased before the report.
  EXPECT_NE(tty.find("\r\x1b[K"), std::string::npos) << tty.substr(0, 400);
  ::setenv("HBMSIM_PROGRESS_AFTER", "0", 1);
  const CliRun file = RunHbmsim("replay " + trace + " --allocator bfc");
  ::unsetenv("HBMSIM_PROGRESS_AFTER");
  EXPECT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(file.err, "");
}

// The variable is checked before any work, like a flag.
TEST(VizCli, AMalformedProgressDelayIsAUsageError) {
  ::setenv("HBMSIM_PROGRESS_AFTER", "soon", 1);
  const CliRun r = RunHbmsim("replay " + ProgressTrace() + " --allocator bfc");
  ::setenv("HBMSIM_PROGRESS_AFTER", "-1", 1);
  const CliRun negative = RunHbmsim("replay " + ProgressTrace() + " --allocator bfc");
  ::unsetenv("HBMSIM_PROGRESS_AFTER");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "hbmsim replay: HBMSIM_PROGRESS_AFTER=soon: not a number of seconds from 0 to 86400 (e.g. 0 or 2.5)\n");
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_NE(negative.err.find("HBMSIM_PROGRESS_AFTER=-1: not a number"), std::string::npos) << negative.err;
}

}  // namespace
}  // namespace hbmsim::testing
