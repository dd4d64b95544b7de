// Where the benchmarks that measure real recordings find them: the folder
// named by HBMSIM_BENCH_DATA (laid out as the shared test data is:
// torch_snapshots/, families/, ...). scripts/bench-real-data.sh sets it to
// the shared recordings beside the repository and runs those benchmarks; the
// repository itself names no folder outside it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace hbmsim::bench {

// HBMSIM_BENCH_DATA/relative. Without the variable, or when the file is not
// there, the program stops with one line saying which, exit 2: a benchmark
// of a missing file measures nothing.
inline std::string BenchDataFile(std::string_view relative) {
  const char* root = std::getenv("HBMSIM_BENCH_DATA");
  if (root == nullptr || *root == '\0') {
    std::fprintf(stderr,
                 "HBMSIM_BENCH_DATA is not set: it names the folder of real recordings this benchmark reads "
                 "(%.*s); scripts/bench-real-data.sh sets it\n",
                 static_cast<int>(relative.size()), relative.data());
    std::exit(2);
  }
  const std::string path = std::string(root) + "/" + std::string(relative);
  if (!std::filesystem::is_regular_file(path)) {
    std::fprintf(stderr, "%s: no such file (HBMSIM_BENCH_DATA=%s)\n", path.c_str(), root);
    std::exit(2);
  }
  return path;
}

}  // namespace hbmsim::bench
