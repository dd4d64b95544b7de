// Damaged dumps: a partial chunk list must never pass as complete, and no
// pasted mess may crash the parser or the diagnosis.
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test_util.h"
#include "trace/bfc_dump/diagnosis.h"
#include "trace/bfc_dump/line_parsers.h"
#include "trace/bfc_dump/line_text.h"

namespace hbmsim::trace::bfc_dump {
namespace {

std::vector<std::string> Dump20Lines() {
  std::ifstream in(std::string(HBMSIM_SHARED_DIR) + "/bfc_dumps/20.txt");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  return text;
}

bool IsChunkLine(const std::string& line) {
  return MatchChunkLine(TrimSpaces(SplitLogPrefix(line).message)).has_value();
}

TEST(RobustnessTest, DroppingAnyChunkLineOfDump20LeavesItIncomplete) {
  const std::vector<std::string> lines = Dump20Lines();
  ASSERT_EQ(lines.size(), 480u);
  int dropped = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!IsChunkLine(lines[i])) continue;
    std::vector<std::string> damaged = lines;
    damaged.erase(damaged.begin() + static_cast<long>(i));
    const BfcLog log = ParseText(Join(damaged));
    ASSERT_EQ(log.dumps.size(), 1u);
    EXPECT_FALSE(ChunkListGaps(log.dumps[0]).empty()) << "without line " << i + 1;
    EXPECT_FALSE(Diagnose(log.dumps[0]).heap_rebuilt) << "without line " << i + 1;
    ++dropped;
  }
  EXPECT_EQ(dropped, 383);
}

TEST(RobustnessTest, EveryPrefixOfDump20BeforeItsLastChunkIsPartial) {
  const std::vector<std::string> lines = Dump20Lines();
  size_t last_chunk = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (IsChunkLine(lines[i])) last_chunk = i;
  }
  EXPECT_EQ(last_chunk + 1, 431u);  // "Free  at 7f1d4d12bf00 ... next 18446744073709551615"
  for (size_t n = 1; n <= lines.size(); ++n) {
    auto log = ParseBfcLog(Join({lines.begin(), lines.begin() + static_cast<long>(n)}), "prefix");
    if (!log.ok()) continue;  // only comments and the device line so far
    const bool rebuilt = Diagnose(log->dumps.back()).heap_rebuilt;
    EXPECT_EQ(rebuilt, n > last_chunk) << n << " lines";
  }
}

// Random cuts, "[...]" marks, dropped characters and garbage lines: the
// parser counts every line and the diagnosis of each dump completes.
TEST(RobustnessTest, RandomDamageNeverCrashes) {
  const std::vector<std::string> lines = Dump20Lines();
  const uint32_t seed = 20261122;
  std::mt19937 rng(seed);
  for (int round = 0; round < 40; ++round) {
    std::vector<std::string> damaged;
    for (std::string line : lines) {
      switch (rng() % 8) {
        case 0:
          line = line.substr(0, rng() % (line.size() + 1));
          break;
        case 1:
          line = line.substr(0, rng() % (line.size() + 1)) + "[...]";
          break;
        case 2:
          if (!line.empty()) line.erase(rng() % line.size(), 1);
          break;
        case 3:
          for (char& c : line) c = static_cast<char>(rng() % 2 ? c : 32 + rng() % 95);
          break;
        default:
          break;
      }
      damaged.push_back(line);
    }
    const std::string text = Join(damaged);
    auto log = ParseBfcLog(text, "damaged");
    if (!log.ok()) continue;
    EXPECT_EQ(log->lines, 480) << "seed " << seed << " round " << round;
    for (const BfcDump& d : log->dumps) EXPECT_FALSE(Diagnose(d).verdict_basis.empty());
  }
}

}  // namespace
}  // namespace hbmsim::trace::bfc_dump
