// End to end: `hbmsim diagnose` on XLA's rematerialization warning, alone and
// next to a BFC dump, and the one-line error of a cut warning.
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/cli/cli_test_util.h"
#include "tests/xla/xla_test_util.h"

namespace hbmsim::xla {
namespace {

using ::hbmsim::testing::ReadFile;
using ::hbmsim::testing::RunHbmsim;
using ::hbmsim::testing::TempPath;
using ::hbmsim::testing::WriteFile;

const std::string kRematLine =
    "W hlo_rematerialization.cc:3005] Can't reduce memory use below 16.00GiB (17179869184 bytes) by "
    "rematerialization; only reduced to 19.00GiB (20401094656 bytes), down from 24.00GiB (25769803776 bytes) "
    "originally\n";

const std::string kRematReport =
    "XLA rematerialization warning (line 2): the compiler could not fit the program under its limit\n"
    "  remat target (limit):     17179869184 (16.00GiB)\n"
    "  peak after remat:         20401094656 (19.00GiB)\n"
    "  peak before remat:        25769803776 (24.00GiB)\n"
    "  over the target:           3221225472 (3.00GiB)\n"
    "  saved by remat:            5368709120 (5.00GiB)\n"
    "  what-if: the program needs at least 20401094656 bytes (19.00GiB) of live buffers at its peak (XLA's "
    "no-fragmentation count), so no allocator fits it in less; a device limit must exceed that plus "
    "fragmentation, and the remat target must grow by at least 3221225472 bytes for the pass to succeed\n";

TEST(XlaDiagnoseCli, ALogWithOnlyARematWarningIsAReport) {
  const std::string json = TempPath("remat.json");
  const auto run = RunHbmsim("diagnose tests/data/xla/remat.log --json " + json);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, kRematReport);
  EXPECT_EQ(run.err, "");
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["dumps"].size(), 0u);
  EXPECT_EQ(j["xla_rematerialization"][0]["limit"], 17179869184u);
  EXPECT_EQ(j["xla_rematerialization"][0]["after"], 20401094656u);
  EXPECT_EQ(j["xla_rematerialization"][0]["before"], 25769803776u);
  EXPECT_EQ(j["xla_rematerialization"][0]["over_target"], 3221225472u);
  EXPECT_EQ(j["xla_rematerialization"][0]["line"], 2);
}

TEST(XlaDiagnoseCli, TheWarningFollowsTheBfcReportOfTheSameLog) {
  const std::string dump = ReadFile(std::string(HBMSIM_SHARED_DIR) + "/bfc_dumps/20.txt");
  ASSERT_FALSE(dump.empty());
  const std::string log = TempPath("mixed.log");
  WriteFile(log, "compiling\n" + kRematLine + dump);
  const std::string json = TempPath("mixed.json");
  const auto run = RunHbmsim("diagnose " + log + " --json " + json);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("fragmentation"), std::string::npos) << run.out;
  ASSERT_GT(run.out.size(), kRematReport.size());
  EXPECT_EQ(run.out.substr(run.out.size() - kRematReport.size() - 1), "\n" + kRematReport);
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["dumps"].size(), 1u);
  EXPECT_EQ(j["xla_rematerialization"][0]["after"], 20401094656u);
}

TEST(XlaDiagnoseCli, ACutWarningIsAOneLineErrorNamingTheLine) {
  const std::string log = TempPath("cut.log");
  WriteFile(log, "x\nCan't reduce memory use below 16.00GiB (17179869184 bytes) by remat\n");
  const auto run = RunHbmsim("diagnose " + log);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "hbmsim diagnose: " + log +
                ":2: expected \"Can't reduce memory use below A (a bytes) by rematerialization; only reduced "
                "to B (b bytes), down from C (c bytes) originally\"\n");
}

}  // namespace
}  // namespace hbmsim::xla
