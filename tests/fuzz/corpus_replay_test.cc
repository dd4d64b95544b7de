// Replays every fuzz target's corpus (tests/fuzz/corpus/<target>/: seeds and
// the inputs of every bug the fuzzer found) in the normal test suite, with any
// compiler and without libFuzzer: one test, <Suite>FuzzCorpus.
// EveryCorpusFileRunsClean, per entry linked in (fuzz_util.h). A target that
// crashes, trips a sanitizer or breaks its oracle aborts this program; the
// file name is printed first so the log says which input did it.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/fuzz/fuzz_util.h"

namespace hbmsim::fuzz {
namespace {

std::vector<std::filesystem::path> CorpusFiles(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());  // a stable order, so a failure reproduces
  return files;
}

class CorpusReplay : public ::testing::Test {
 public:
  explicit CorpusReplay(const Entry& entry) : entry_(entry) {}

  void TestBody() override {
    const std::filesystem::path dir = std::filesystem::path(HBMSIM_FUZZ_CORPUS_ROOT) / entry_.name;
    const std::vector<std::filesystem::path> files = CorpusFiles(dir);
    // An empty or missing corpus would make this test pass without running anything.
    ASSERT_GE(files.size(), 3u) << dir;
    for (const std::filesystem::path& file : files) {
      std::fprintf(stderr, "corpus file: %s\n", file.c_str());
      std::ifstream in(file, std::ios::binary);
      ASSERT_TRUE(in) << file;
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      EXPECT_EQ(entry_.run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0) << file;
    }
  }

 private:
  Entry entry_;
};

// Every target of tests/fuzz/CMakeLists.txt registered its entry: a file
// whose entry is missing or misnamed would otherwise drop its corpus silently.
TEST(FuzzCorpus, EveryTargetHasItsEntry) {
  std::vector<std::string> names;
  for (const Entry& entry : Entries()) names.emplace_back(entry.name);
  std::sort(names.begin(), names.end());
  const std::string listed = HBMSIM_FUZZ_TARGETS;  // "a,b,c"
  std::vector<std::string> expected;
  for (size_t start = 0; start <= listed.size();) {
    const size_t end = std::min(listed.find(',', start), listed.size());
    expected.push_back(listed.substr(start, end - start));
    start = end + 1;
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names, expected);
}

// One test per entry, in name order (static initialisation's order is not
// the same from one link to the next).
void RegisterCorpusTests() {
  std::vector<Entry> entries = Entries();
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return std::string_view(a.name) < std::string_view(b.name); });
  for (const Entry& entry : entries) {
    ::testing::RegisterTest(entry.suite, "EveryCorpusFileRunsClean", nullptr, nullptr, __FILE__, __LINE__,
                            [entry]() -> ::testing::Test* { return new CorpusReplay(entry); });
  }
}

}  // namespace
}  // namespace hbmsim::fuzz

// Its own main, not gtest_main's: the tests exist only once every entry has
// registered, which static initialisation guarantees by the time main runs.
int main(int argc, char** argv) {
  hbmsim::fuzz::RegisterCorpusTests();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
