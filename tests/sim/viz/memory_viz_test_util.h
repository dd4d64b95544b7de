// Runs the Python side of the memory_viz tests: memory_viz_check.py (the
// viewer's backward walk) and memory_viz_compare.py (recording vs export).
#ifndef HBMSIM_TESTS_VIZ_MEMORY_VIZ_TEST_UTIL_H_
#define HBMSIM_TESTS_VIZ_MEMORY_VIZ_TEST_UTIL_H_

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace hbmsim::testing {

inline bool HavePython() { return std::system("python3 -c 'import pickle' >/dev/null 2>&1") == 0; }

// stdout of `python3 tests/sim/viz/SCRIPT ARGS` (stderr too, so a traceback shows).
inline std::string RunPython(const std::string& script, const std::string& args) {
  const std::string cmd =
      std::string("python3 ") + HBMSIM_SOURCE_DIR + "/tests/sim/viz/" + script + " " + args + " 2>&1";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
    pclose(p);
  }
  return out;
}

// One line per device, or "FAIL: <path>: <why>".
inline std::string MemoryVizCheck(const std::string& path) { return RunPython("memory_viz_check.py", path); }

// Every PyTorch snapshot shipped in ../shared/torch_snapshots, sorted.
inline std::vector<std::string> SharedSnapshots() {
  std::vector<std::string> out;
  const std::filesystem::path dir = std::filesystem::path(HBMSIM_SOURCE_DIR) / "../shared/torch_snapshots";
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (ext == ".pickle" || ext == ".pkl") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_VIZ_MEMORY_VIZ_TEST_UTIL_H_
