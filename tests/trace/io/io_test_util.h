// Scratch folders and file helpers for the trace/io tests.
#ifndef HBMSIM_TESTS_IO_IO_TEST_UTIL_H_
#define HBMSIM_TESTS_IO_IO_TEST_UTIL_H_

#include <dirent.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace hbmsim::testing {

// An empty folder of its own per test (ctest runs tests in parallel).
inline std::string ScratchDir() {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string dir = ::testing::TempDir() + "/hbmsim_io_" + test->test_suite_name() + "_" + test->name();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void Spit(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Every name in `dir`, hidden ones (temporaries) included.
inline std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_IO_IO_TEST_UTIL_H_
