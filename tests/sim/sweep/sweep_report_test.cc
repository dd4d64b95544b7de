// The sweep report of size results that carry a fresh-start answer (a
// recording that began with memory reserved): both answers, each said once.
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "sim/sweep/sweep_report.h"

namespace hbmsim::sim::sweep {
namespace {

void WriteLine(const std::string& dir, int task, const std::string& recording, const std::string& result) {
  std::ofstream(dir + "/task-00000" + std::to_string(task) + ".json")
      << R"({"key": {"recording": ")" << recording
      << R"(", "allocator": "torch", "settings": "", "question": "size", "bytes_limit": null}, "exit_code": 0, )"
      << R"("result": )" << result << "}\n";
}

TEST(SweepReportTest, SizeRowsCarryTheFreshStartAnswer) {
  const std::string dir = ::testing::TempDir() + "/sweep_fresh";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  WriteLine(dir, 0, "warm.pickle", R"({"min_bytes_limit": 1000, "fresh_start": {"min_bytes_limit": 900}})");
  WriteLine(dir, 1, "empty.pickle", R"({"min_bytes_limit": 500, "fresh_start": null})");
  absl::StatusOr<SweepSummary> s = SummarizeResults(dir);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->rows.size(), 1u);
  EXPECT_EQ(s->rows[0].needed, (std::vector<uint64_t>{1000, 500}));
  EXPECT_EQ(s->rows[0].needed_fresh, std::vector<uint64_t>{900});
  const std::string text = SummaryText(*s);
  EXPECT_NE(text.find("\nFrom a fresh start (size rows of the recordings that began with memory reserved; "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("torch      (as configured)                                  1            900            900"
                      "            900\n"),
            std::string::npos)
      << text;
  const std::string csv = SummaryCsv(*s);
  EXPECT_NE(csv.find(",fresh_need_median,fresh_need_max\n"), std::string::npos);
  EXPECT_NE(csv.find("torch,\"\",size,,2,2,0,0,500,1000,1000,0,0,900,900\n"), std::string::npos) << csv;
}

}  // namespace
}  // namespace hbmsim::sim::sweep
