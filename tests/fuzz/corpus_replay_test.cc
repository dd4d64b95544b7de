// Replays one fuzz target's corpus (tests/fuzz/corpus/<target>/: seeds and the
// inputs of every bug the fuzzer found) in the normal test suite, with any
// compiler and without libFuzzer. A target that crashes, trips a sanitizer or
// breaks its oracle aborts this test; the file name is printed first so the
// log says which input did it.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::filesystem::path> CorpusFiles() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(HBMSIM_FUZZ_CORPUS)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());  // a stable order, so a failure reproduces
  return files;
}

TEST(HBMSIM_FUZZ_SUITE, EveryCorpusFileRunsClean) {
  std::vector<std::filesystem::path> files = CorpusFiles();
  // An empty or missing corpus would make this test pass without running anything.
  ASSERT_GE(files.size(), 3u) << HBMSIM_FUZZ_CORPUS;
  for (const std::filesystem::path& file : files) {
    std::fprintf(stderr, "corpus file: %s\n", file.c_str());
    std::ifstream in(file, std::ios::binary);
    ASSERT_TRUE(in) << file;
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0) << file;
  }
}

}  // namespace
