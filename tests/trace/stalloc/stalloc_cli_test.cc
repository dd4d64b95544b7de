// hbmsim (HBMSIM_BINARY) on STAlloc mem_logs: detected by content, replayed
// with exact placements and peak, converted to the text format, and malformed
// logs exit 2 with one line naming file:line.
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::testing {
namespace {

constexpr char kLog[] = "tests/data/stalloc/mem_log_dev1.txt";

void ExpectBadInput(const CliRun& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, message + "\n");
  EXPECT_EQ(r.out, "");
}

// Buffer 3 (2 MiB, stream 1) is freed and its pointer reused by buffer 4 on
// stream 2; BFC puts 4 where 3 was, after the 1 MiB + 4 KiB that stay live.
TEST(StallocCliTest, ReplaysTheFixtureOnDeviceOneUnderBfc) {
  const std::string csv = TempPath("placements.csv");
  const std::string json = TempPath("replay.json");
  CliRun r = RunHbmsim(std::string("replay ") + kLog + " --allocator bfc --bytes-limit 16MiB --placements " +
                       csv + " --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  events:     14 replayed of 14 read (device 1, 0 on other devices skipped)\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(ReadFile(csv),
            "event,id,requested,status,offset,size\n"
            "0,1,1048576,ok,0,1048576\n"
            "1,2,4096,ok,1048576,4096\n"
            "5,3,2097152,ok,1052672,2097152\n"
            "9,4,524288,ok,1052672,524288\n");
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["peak_live_bytes"], 1048576 + 4096 + 2097152);
}

TEST(StallocCliTest, ConvertsToTheTextFormat) {
  const std::string out = TempPath("mem_log.trace");
  CliRun r = RunHbmsim(std::string("convert ") + kLog + " " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(out),
            "# hbmsim-trace v1\n"
            "# source: stalloc mem_log\n"
            "# device: 1\n"
            "alloc 1 1048576 addr=0x7f3a00000000 device=1\n"
            "alloc 2 4096 addr=0x7f3a00100000 device=1\n"
            "mark iteration=0 device=1\n"
            "mark micro_batch=F device=1\n"
            "mark layer=decoder.layers.0.mlp->MoELayer:F-start device=1\n"
            "alloc 3 2097152 stream=1 addr=0x7f3a00200000 device=1\n"
            "mark layer=decoder.layers.0.mlp->MoELayer:F-end device=1\n"
            "mark micro_batch=B device=1\n"
            "free 3 stream=1 device=1\n"
            "alloc 4 524288 stream=2 addr=0x7f3a00200000 device=1\n"
            "free 2 device=1\n"
            "mark token_dispatcher_preprocess=F-end device=1\n"
            "mark iteration=end device=1\n"
            "free 4 stream=2 device=1\n");
}

TEST(StallocCliTest, FreeWithAnotherSizeNamesFileAndLine) {
  const std::string log = TempPath("mem_log_dev0.txt");
  WriteFile(log, "Iteration Index : 0\n1 0x7f0000000000 512 0\n0 0x7f0000000000 1024 0\n");
  ExpectBadInput(
      RunHbmsim("replay " + log + " --allocator bfc --bytes-limit 1MiB"),
      "hbmsim replay: " + log +
          ":3: free of 0x7f0000000000 with size 1024, but it was allocated with size 512 on line 2");
}

TEST(StallocCliTest, UnknownMicroBatchNamesFileAndLine) {
  const std::string log = TempPath("mem_log_dev0.txt");
  WriteFile(log, "1 0x7f0000000000 512 0\nmicro-batch : Q\n");
  ExpectBadInput(RunHbmsim("convert " + log + " " + TempPath("out.trace")),
                 "hbmsim convert: " + log + ":2: micro-batch must be F, B or W, found 'Q'");
}

TEST(StallocCliTest, GarbageAfterAGoodFirstLineNamesFileAndLine) {
  const std::string log = TempPath("mem_log_dev0.txt");
  WriteFile(log, "1 0x7f0000000000 512 0\nhello world\n");
  ExpectBadInput(RunHbmsim("replay " + log + " --allocator bfc --bytes-limit 1MiB"),
                 "hbmsim replay: " + log +
                     ":2: expected an event 'status ptr size stream' (4 fields) or a marker 'name : value', "
                     "found 2 fields");
}

}  // namespace
}  // namespace hbmsim::testing
