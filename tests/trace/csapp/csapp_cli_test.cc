// hbmsim (HBMSIM_BINARY) on CS:APP .rep traces: detected by content, replayed
// with exact placements and peak, converted to the text format, and malformed
// traces exit 2 with one line naming file:line.
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::testing {
namespace {

constexpr char kRep[] = "tests/data/csapp/realloc_moves.rep";

void ExpectBadInput(const CliRun& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, message + "\n");
  EXPECT_EQ(r.out, "");
}

// The moving realloc makes the peak 1000 + 200 + 1500 = 2700 bytes (mdriver,
// which grows in place, would say 2000). BFC rounds to 256 bytes: buffer 4
// (300 -> 512) reuses the 1024 bytes buffer 1 left at offset 0.
TEST(CsappCliTest, ReplaysTheFixtureUnderBfc) {
  const std::string csv = TempPath("placements.csv");
  const std::string json = TempPath("replay.json");
  CliRun r = RunHbmsim(std::string("replay ") + kRep + " --allocator bfc --bytes-limit 1MiB --placements " +
                       csv + " --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(csv),
            "event,id,requested,status,offset,size\n"
            "0,1,1000,ok,0,1024\n"
            "1,2,200,ok,1024,256\n"
            "2,3,1500,ok,1280,1536\n"
            "4,4,300,ok,0,512\n"
            "6,5,100,ok,512,256\n"
            "9,6,64,ok,512,256\n");
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["peak_live_bytes"], 2700);
}

TEST(CsappCliTest, ConvertsToTheTextFormat) {
  const std::string out = TempPath("rep.trace");
  CliRun r = RunHbmsim(std::string("convert ") + kRep + " " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(out),
            "# hbmsim-trace v1\n"
            "# source: cs:app malloc lab .rep\n"
            "# rep_header_1: 4096\n"
            "# rep_ids: 3\n"
            "# rep_operations: 9\n"
            "# rep_header_4: 1\n"
            "alloc 1 1000 tag=rep:0\n"
            "alloc 2 200 tag=rep:1\n"
            "alloc 3 1500 tag=rep:0:realloc\n"
            "free 1\n"
            "alloc 4 300 tag=rep:2\n"
            "free 2\n"
            "alloc 5 100 tag=rep:0:realloc\n"
            "free 3\n"
            "free 5\n"
            "alloc 6 64 tag=rep:1\n"
            "free 4\n");
}

TEST(CsappCliTest, BadHeaderNamesFileAndLine) {
  const std::string rep = TempPath("bad_header.rep");
  WriteFile(rep, "20000\n2\nmany\n1\na 0 8\n");
  ExpectBadInput(RunHbmsim("replay " + rep + " --allocator bfc --bytes-limit 1MiB"),
                 "hbmsim replay: " + rep +
                     ":3: header line 3 (number of operations) must be a plain number, "
                     "found 'many'");
}

TEST(CsappCliTest, FreeOfAnIdThatIsNotLiveNamesFileAndLine) {
  const std::string rep = TempPath("not_live.rep");
  WriteFile(rep, "20000\n2\n3\n1\na 0 8\nf 1\nf 0\n");
  ExpectBadInput(RunHbmsim("replay " + rep + " --allocator bfc --bytes-limit 1MiB"),
                 "hbmsim replay: " + rep + ":6: f of id 1, which is not live");
}

TEST(CsappCliTest, MissingOperationsNameTheHeaderLine) {
  const std::string rep = TempPath("short.rep");
  WriteFile(rep, "20000\n1\n3\n1\na 0 8\nf 0\n");
  ExpectBadInput(RunHbmsim("convert " + rep + " " + TempPath("out.trace")),
                 "hbmsim convert: " + rep + ":3: the header declares 3 operations, but the file has 2");
}

}  // namespace
}  // namespace hbmsim::testing
