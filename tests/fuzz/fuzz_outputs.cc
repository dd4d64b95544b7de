// libFuzzer target (issue 48): every output format written from a corrupted
// recording, through the commands themselves (in-process, as the Python
// module runs them). The first byte picks what is run on the rest:
//
//   b % 4 == 0  replay --json --html --perfetto --memory-viz X.json --no-advice
//   b % 4 == 1  replay --placements --memory-viz X.pickle (advice included: the
//               "what would fit" replays, and their part of --json)
//   b % 4 == 2  diagnose --json (a log: BFC dumps, OOM texts, remat warnings;
//               a TF/JAX profile, with --html)
//   b % 4 == 3  the bytes as a sweep spec (`sweep SPEC --list`: each task's
//               key as JSON) and as a result line (`sweep report`: text,
//               CSV, HTML), through sim/sweep, with recording patterns
//               matching themselves so a fuzzed `/*/*/*` walks nothing
//   b & 0x10    adds --bytes-limit 64MiB (else the recording's own, if any)
//
// Formats are told apart by content, so the corpus holds a seed of every
// reader (text, .hbt, pickle, RMM, STAlloc, CS:APP, XLA text and proto,
// XSpace, memory_profile.json, pprof, BFC logs) behind each mode byte.
//
// Oracle: exit 3 (an internal error, a thrown exception) is a finding, as is
// any crash or sanitizer report; every JSON output a run left must parse.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "sim/cli/cli_run.h"
#include "sim/sweep/sweep_report.h"
#include "sim/sweep/sweep_spec.h"
#include "tests/fuzz/fuzz_util.h"
#include "trace/core/json_text.h"
#include "trace/io/temp_registry.h"

namespace {

using hbmsim::fuzz::Fail;

// One scratch folder per process, emptied between inputs and removed when
// the process exits (every corpus test and fuzz run would otherwise leave
// one in the temporary directory).
class ScratchFolder {
 public:
  ScratchFolder() {
    hbmsim::trace::io::KeepHostSignalHandlers();  // libFuzzer owns SIGINT and friends
    path_ = (std::filesystem::temp_directory_path() / "hbmsim-fuzz-outputs-XXXXXX").string();
    if (::mkdtemp(path_.data()) == nullptr) Fail("cannot make a scratch folder");
  }
  ~ScratchFolder() {
    std::error_code ignored;  // nothing to tell at exit: a folder left is all that can go wrong
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const std::string& ScratchDir() {
  static const ScratchFolder folder;
  return folder.path();
}

void WriteBytes(const std::string& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A JSON output the run left (none when it failed) must be JSON.
void CheckJsonFile(const std::string& path, bool lines) {
  if (!std::filesystem::exists(path)) return;
  const std::string text = ReadBytes(path);
  if (lines) return;  // placements are CSV
  if (nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false).is_discarded()) {
    Fail(fmt::format("{} is not valid JSON ({} bytes)", path, text.size()));
  }
}

void Run(const std::vector<std::string>& args) {
  const hbmsim::sim::cli::CapturedRun run = hbmsim::sim::cli::RunCliCaptured(args);
  if (run.exit_code == 3 || run.exit_code < 0 || run.exit_code > 3) {
    Fail(fmt::format("exit {} from hbmsim {}: {}", run.exit_code, args.front(), run.err));
  }
}

void Replay(const std::string& dir, const std::string& input, bool pickle, bool limit) {
  std::vector<std::string> args = {"replay", input};
  if (limit) args.insert(args.end(), {"--bytes-limit", "64MiB"});
  if (pickle) {
    args.insert(args.end(), {"--placements", dir + "/p.csv", "--memory-viz", dir + "/v.pickle"});
  } else {
    args.insert(args.end(), {"--json", dir + "/r.json", "--html", dir + "/r.html", "--perfetto",
                             dir + "/t.json", "--memory-viz", dir + "/v.json", "--no-advice"});
  }
  Run(args);
  for (const char* json : {"/r.json", "/t.json", "/v.json"}) CheckJsonFile(dir + json, false);
}

void Diagnose(const std::string& dir, const std::string& input) {
  Run({"diagnose", input, "--json", dir + "/d.json"});
  CheckJsonFile(dir + "/d.json", false);
}

// `sweep SPEC --list` and `sweep report DIR` as the commands print them.
void Sweep(const std::string& dir, std::string_view bytes) {
  hbmsim::sim::sweep::SweepSpecOptions options;
  options.expand = [](const std::string& pattern) { return std::vector<std::string>{pattern}; };
  options.max_tasks = 2000;
  absl::StatusOr<hbmsim::sim::sweep::SweepSpec> spec =
      hbmsim::sim::sweep::ParseSweepSpec(bytes, dir + "/s.yaml", options);
  if (spec.ok()) {
    std::string list;
    for (const hbmsim::sim::sweep::SweepTask& t : spec->tasks) list += hbmsim::JsonText(t.Key()) + "\n";
  }
  const std::string results = dir + "/results";
  std::filesystem::create_directories(results);
  WriteBytes(results + "/task-000000.json", bytes);
  absl::StatusOr<hbmsim::sim::sweep::SweepSummary> summary = hbmsim::sim::sweep::SummarizeResults(results);
  if (!summary.ok()) return;
  const std::string text = hbmsim::sim::sweep::SummaryText(*summary) +
                           hbmsim::sim::sweep::SummaryCsv(*summary) +
                           hbmsim::sim::sweep::SummaryHtml(*summary);
  if (text.empty()) Fail("an empty sweep report");
}

}  // namespace

HBMSIM_FUZZ_ENTRY(outputs, OutputsFuzzCorpus) {
  if (size == 0) return 0;
  const std::string& dir = ScratchDir();
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    std::filesystem::remove_all(entry.path());
  const uint8_t mode = data[0];
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string input = dir + "/input";
  WriteBytes(input, bytes);
  switch (mode % 4) {
    case 0:
      Replay(dir, input, /*pickle=*/false, (mode & 0x10) != 0);
      break;
    case 1:
      Replay(dir, input, /*pickle=*/true, (mode & 0x10) != 0);
      break;
    case 2:
      Diagnose(dir, input);
      break;
    default:
      Sweep(dir, bytes);
      break;
  }
  return 0;
}
