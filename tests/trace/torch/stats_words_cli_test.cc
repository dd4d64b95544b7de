// Stats in the user's own words and never wrong (issue 15 item 4), end to end:
// every shared snapshot replayed with --allocator torch, with no limit and with
// limits that make it fail, prints no negative or wrapped number in the text
// or the JSON report; torch replays name PyTorch's memory_stats() keys, bfc
// keeps TF's AllocatorStats lines; "unlimited" is printed as such; the header
// and the JSON show the options that really ran.
#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"
#include "tests/common/sanitized_build.h"

namespace hbmsim::testing {
namespace {

// Every *.pickle / *.pkl of the shared folder, so new recordings are covered.
std::vector<std::string> SharedSnapshots() {
  std::vector<std::string> out;
  const std::string dir = std::string(HBMSIM_SOURCE_DIR) + "/" + kTorchSnapshotDir;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    const auto ends_with = [&](const std::string& s) {
      return name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
    };
    if (ends_with(".pickle") || ends_with(".pkl")) out.push_back(name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// The first "-<digit>" that starts a number (after a space, '(', '=', ':',
// ',', '[', '|' or at a line start), with the line it is on; "" if none.
// Hyphens inside words and paths (gen5-x, 1-10) do not count.
std::string FirstNegativeNumber(const std::string& text) {
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '-' || !std::isdigit(static_cast<unsigned char>(text[i + 1]))) continue;
    const char before = i == 0 ? '\n' : text[i - 1];
    if (std::string_view(" \n\t(=:,[|").find(before) == std::string_view::npos) continue;
    const size_t start = text.rfind('\n', i) == std::string::npos ? 0 : text.rfind('\n', i) + 1;
    return text.substr(start, text.find('\n', i) - start);
  }
  return "";
}

// The JSON path of the first negative number; "" if none.
std::string FirstNegativeJson(const nlohmann::json& j, const std::string& path = "") {
  if (j.is_number_integer() && j.get<int64_t>() < 0) return path + "=" + j.dump();
  if (j.is_number_float() && j.get<double>() < 0) return path + "=" + j.dump();
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (std::string bad = FirstNegativeJson(it.value(), path + "." + it.key()); !bad.empty()) return bad;
    }
  }
  if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      if (std::string bad = FirstNegativeJson(j[i], path + "[" + std::to_string(i) + "]"); !bad.empty())
        return bad;
    }
  }
  return "";
}

TEST(StatsWordsCliTest, NoNegativeNumberInAnyTorchReportOfAnySharedSnapshot) {
  ASSERT_GE(SharedSnapshots().size(), 17u);
  // Every snapshot; the 8 smallest under the sanitizers (tests/common/sanitized_build.h):
  // state-only files and four with a trace, each report section, not every recording again.
  const std::vector<std::string> files =
      SmallestForThisBuild(SharedSnapshots(), 8, std::string(HBMSIM_SOURCE_DIR) + "/" + kTorchSnapshotDir);
  int reports = 0;
  for (const std::string& file : files) {
    for (const std::string limit : {"", "--bytes-limit 1GiB", "--bytes-limit 80GiB"}) {
      const std::string json = TempPath("report.json");
      std::remove(json.c_str());
      const CliRun r = RunHbmsim("replay " + kTorchSnapshotDir + file + " --allocator torch " + limit + " --json " + json);
      const std::string what = file + " " + limit;
      if (r.exit_code == 2) {  // a state-only file: one line naming it, no report
        EXPECT_EQ(CountLines(r.err), 1) << what << ": " << r.err;
        EXPECT_NE(r.err.find(file), std::string::npos) << what << ": " << r.err;
        continue;
      }
      ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << what << ": " << r.err;
      ++reports;
      EXPECT_EQ(FirstNegativeNumber(r.out), "") << what;
      EXPECT_EQ(FirstNegativeNumber(r.err), "") << what;
      const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
      EXPECT_EQ(FirstNegativeJson(j), "") << what;
    }
  }
  EXPECT_GE(reports, ForThisBuild(30, 6));  // most files carry a trace
}

// The checker itself catches what it is there for.
TEST(StatsWordsCliTest, TheNegativeNumberCheckFindsOne) {
  EXPECT_EQ(FirstNegativeNumber("LargestFreeBlock:    -562036736\n"), "LargestFreeBlock:    -562036736");
  EXPECT_EQ(FirstNegativeNumber("limit -1B\n"), "limit -1B");
  EXPECT_EQ(FirstNegativeNumber("  trace: gen5-1 1-10 MiB x-2\n"), "");
  EXPECT_EQ(FirstNegativeJson(nlohmann::json::parse(R"({"a":{"b":[1,-2]}})")), ".a.b[1]=-2");
  EXPECT_EQ(FirstNegativeJson(nlohmann::json::parse(R"({"a":null,"b":0.5})")), "");
}

// No limit: "unlimited" where a limit or a free block would be, PyTorch's
// names for PyTorch's numbers, and null in the JSON.
TEST(StatsWordsCliTest, UnlimitedTorchReplayInPyTorchWords) {
  const std::string json = TempPath("small.json");
  const CliRun r =
      RunHbmsim("replay " + kTorchSnapshotDir + "small_trace_from_empty.pickle --allocator torch --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  limit:      unlimited from none: unlimited (the recording records no OOM)\n"),
            std::string::npos)
      << r.out;
  const std::string stats =
      "\nStats at the end of the replay (torch.cuda.memory_stats() names):\n"
      "  reserved_bytes.all.current                      3781165056 (3.52GiB)\n";
  EXPECT_NE(r.out.find(stats), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  max_split_size                                             unlimited\n"
                       "and hbmsim's:\n"
                       "  device capacity (limit)                                    unlimited\n"
                       "  largest request that fits now                              unlimited\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("LargestFreeBlock:"), std::string::npos) << "TF's names are for bfc";
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_TRUE(j["allocator"]["bytes_limit"].is_null());
  EXPECT_TRUE(j["stats"]["bytes_limit"].is_null());
  EXPECT_TRUE(j["stats"]["largest_free_block_bytes"].is_null());
  EXPECT_TRUE(j["counters"]["max_split_size"].is_null());
  EXPECT_EQ(j["counters"]["reserved_bytes.all.current"], 3781165056);
}

// alloc_conf is applied last: the header and the JSON show what ran, not
// the snapshot's expandable_segments=true.
TEST(StatsWordsCliTest, AllocConfShowsAsTheOptionsItSets) {
  const std::string json = TempPath("h100.json");
  const CliRun r = RunHbmsim("replay " + kTorchSnapshotDir +
                             "h100x4_expandable_segments_oom.pickle --allocator torch --device 1 "
                             "--set alloc_conf=expandable_segments:False,max_split_size_mb:64 --json " +
                             json);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  EXPECT_NE(r.out.find("  options:    alloc_conf=expandable_segments:False,max_split_size_mb:64 "
                       "expandable_segments=false max_split_size=67108864 "),
            std::string::npos)
      << r.out.substr(0, 600);
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["allocator"]["options"]["expandable_segments"], false);
  EXPECT_EQ(j["allocator"]["options"]["max_split_size"], 67108864);
  EXPECT_EQ(j["allocator"]["options"]["alloc_conf"], "expandable_segments:False,max_split_size_mb:64");
}

// bfc keeps TensorFlow's AllocatorStats::DebugString lines, exactly.
TEST(StatsWordsCliTest, BfcKeepsTensorFlowNames) {
  const std::string trace = TempPath("t.trace");
  WriteFile(trace, "alloc 1 1000\nalloc 2 3000\nfree 1\n");
  const CliRun r = RunHbmsim("replay " + trace + " --allocator bfc --bytes-limit 1MiB");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nStats at the end of the replay (TensorFlow/JAX AllocatorStats names):\n"
                       "Limit:                         1048576\n"
                       "InUse:                            3072\n"
                       "MaxInUse:                         4096\n"
                       "NumAllocs:                           2\n"
                       "MaxAllocSize:                     3072\n"
                       "Reserved:                            0\n"
                       "PeakReserved:                        0\n"
                       "LargestFreeBlock:              1044480\n"
                       "PoolBytes:                     1048576\n"
                       "PeakPoolBytes:                 1048576\n"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace hbmsim::testing
