// `hbmsim sweep SPEC.yaml --out DIR [--shard I/N] [--jobs N]`: runs a sweep's
// tasks (sim/sweep/sweep_spec.h), each task one hbmsim command run
// in-process (cli_run.h), so a task's numbers are exactly that command's.
// Each finished task is one JSON line in DIR/task-NNNNNN.json, written
// atomically (trace/io/output_file.h: a killed run leaves no partial line),
// and a rerun skips the tasks whose line is there with the same key: a shard
// preempted by Slurm or Kubernetes resumes where it stopped. A folder holding
// another sweep's results (another spec, or this one before an edit) is
// refused: its lines would be overwritten or merged into this one's report.
//
// `hbmsim sweep report DIR [--csv OUT] [--html OUT]` merges every shard's
// lines into the summary (sim/sweep/sweep_report.h).
//   --list       prints the task list (one JSON key per line), runs nothing;
//                with --out, first checks that DIR holds no other sweep's results
//   --task K     runs the one task K (what hbmsim.dask sends each worker)
#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "sim/cli/cli_run.h"
#include "sim/cli/command.h"
#include "sim/layer.h"
#include "sim/sweep/sweep_report.h"
#include "sim/sweep/sweep_spec.h"
#include "sim/whatif/thread_pool.h"
#include "trace/core/json_text.h"
#include "trace/core/numbers.h"
#include "trace/io/output_file.h"
#include "trace/io/output_set.h"

namespace hbmsim::sim::cli {
namespace {

using sweep::SweepTask;

int Fail(const std::string& message) {
  PrintError(fmt::format("hbmsim sweep: {}", OneLineMessage(message)));
  return kExitBadInput;
}

std::optional<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The key of the result line at `path`; nullopt when there is none or it is
// damaged (sweep::ReadResultLine): such a task runs again.
std::optional<nlohmann::ordered_json> KeyOfLine(const std::string& path) {
  std::optional<nlohmann::ordered_json> line = sweep::ReadResultLine(path);
  if (!line) return std::nullopt;
  return (*line)["key"];
}

// A finished task: its line is there and names this very task.
bool Finished(const std::string& path, const SweepTask& task) {
  const std::optional<nlohmann::ordered_json> key = KeyOfLine(path);
  return key && *key == task.Key();
}

// Every result already in DIR (or, with --task, that task's) must be a task
// of this spec. A line of another sweep, or of this spec before an edit
// renumbered its tasks, would be overwritten, and one past this spec's last
// task merged into its report: refused before anything runs.
absl::Status CheckResultsAreThisSweeps(const std::string& dir, const sweep::SweepSpec& spec,
                                       const SweepTask* only) {
  std::vector<std::string> files;
  if (only != nullptr) {
    files.push_back(dir + "/" + only->FileName());  // --task: one per call, so never a scan of DIR
  } else {
    absl::StatusOr<std::vector<std::string>> all = sweep::ResultFiles(dir);
    if (!all.ok()) return all.status();
    files = *std::move(all);
  }
  for (const std::string& path : files) {
    const std::optional<nlohmann::ordered_json> key = KeyOfLine(path);
    if (!key) continue;
    const std::string name = std::filesystem::path(path).filename().string();  // task-NNNNNN.json
    const absl::StatusOr<uint64_t> index = ParseU64(name.substr(5, name.size() - 10));
    if (index.ok() && *index < spec.tasks.size() && *key == spec.tasks[*index].Key()) continue;
    return absl::InvalidArgumentError(fmt::format(
        "--out {}: {} holds a result of another sweep ({}), not task {} of this spec; give another --out "
        "folder, or remove its task-*.json files to start over",
        dir, name, JsonText(*key), index.ok() ? std::to_string(*index) : name));
  }
  return absl::OkStatus();
}

// One task's result: the JSON line its file holds, and whether that line
// carries an error instead of a result.
struct TaskLine {
  std::string text;
  bool error = false;
};

// Runs one task's command and returns its result line. The command's --json
// goes to a hidden file in DIR (removed after), so a task never depends on
// $TMPDIR and two shards never share a scratch name.
TaskLine RunTask(const SweepTask& task, const std::string& dir) {
  const std::string report_path = fmt::format("{}/.{}.report", dir, task.FileName());
  const CapturedRun run = RunCliCaptured(task.Args(report_path));
  nlohmann::ordered_json line;
  line["key"] = task.Key();
  line["exit_code"] = run.exit_code;
  std::optional<std::string> report = ReadWhole(report_path);
  std::filesystem::remove(report_path);
  nlohmann::ordered_json parsed;
  if (run.exit_code < 2 && report) {
    parsed = nlohmann::ordered_json::parse(*report, nullptr, /*allow_exceptions=*/false);
  }
  if (!parsed.is_object()) {
    std::string err = run.err;
    while (!err.empty() && err.back() == '\n') err.pop_back();
    if (err.empty()) err = fmt::format("the command wrote no readable --json report (exit {})", run.exit_code);
    line["error"] = err.substr(err.rfind('\n') == std::string::npos ? 0 : err.rfind('\n') + 1);
    line["result"] = nullptr;
  } else {
    line["error"] = nullptr;
    line["result"] = sweep::CompactResult(task.question, std::move(parsed));
  }
  return {JsonText(line) + "\n", !line["error"].is_null()};
}

class SweepCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("ARGS", args_, "SPEC.yaml to run a sweep, or: report DIR")->required();
    app.add_option("--out", out_, "the results folder: one task-NNNNNN.json line per finished task");
    app.add_option("--shard", shard_, "I/N: run the tasks whose index % N == I ($SLURM_ARRAY_TASK_ID/N)");
    app.add_option("--task", task_, "run only task K (hbmsim.dask sends one per worker call)")
        ->check(UnsignedNumber());
    app.add_option("--jobs", jobs_, "tasks run in parallel (default 1); the results never depend on it");
    app.add_flag("--list", list_,
                 "print the task list, one JSON line per task, and run nothing (with --out: after checking that "
                 "the folder holds no other sweep's results)");
    app.add_option("--csv", csv_, "report: also write the summary table as CSV here");
    app.add_option("--html", html_, "report: also write the summary as an HTML page with plots here");
  }
  int Run() override;

 private:
  int RunSweep(const std::string& spec_path);
  int ListTasks(const sweep::SweepSpec& spec) const;
  absl::StatusOr<std::vector<const SweepTask*>> TasksOfThisRun(const sweep::SweepSpec& spec,
                                                               std::pair<size_t, size_t>& shard) const;
  // Runs `to_run` and writes each result file; the tasks that wrote an error
  // line, or the first write failure.
  absl::StatusOr<size_t> RunTasks(const std::vector<const SweepTask*>& to_run) const;
  int RunReport(const std::string& dir);

  std::vector<std::string> args_;
  std::string out_, shard_, task_, csv_, html_;
  int jobs_ = 1;
  bool list_ = false;
};

int SweepCommand::Run() {
  if (jobs_ < 1) return Fail(fmt::format("--jobs {}: must be at least 1", jobs_));
  if (args_[0] == "report") {
    if (args_.size() != 2) return Fail("report: pass the results folder: hbmsim sweep report DIR");
    return RunReport(args_[1]);
  }
  if (args_.size() != 1) return Fail("pass one SPEC.yaml (or: report DIR)");
  return RunSweep(args_[0]);
}

int SweepCommand::RunSweep(const std::string& spec_path) {
  absl::StatusOr<sweep::SweepSpec> spec = sweep::LoadSweepSpec(spec_path);
  if (!spec.ok()) return Fail(std::string(spec.status().message()));
  if (list_) return ListTasks(*spec);
  if (out_.empty()) return Fail("--out DIR: where the task results go");
  std::pair<size_t, size_t> shard{0, 1};
  absl::StatusOr<std::vector<const SweepTask*>> mine = TasksOfThisRun(*spec, shard);
  if (!mine.ok()) return Fail(std::string(mine.status().message()));
  std::error_code ec;
  std::filesystem::create_directories(out_, ec);
  if (ec) return Fail(fmt::format("--out: cannot create {}: {}", out_, ec.message()));
  if (absl::Status s = CheckResultsAreThisSweeps(out_, *spec, task_.empty() ? nullptr : mine->front());
      !s.ok()) {
    return Fail(std::string(s.message()));
  }
  std::vector<const SweepTask*> to_run;
  for (const SweepTask* t : *mine) {
    if (!Finished(out_ + "/" + t->FileName(), *t)) to_run.push_back(t);
  }
  absl::StatusOr<size_t> errors = RunTasks(to_run);
  if (!errors.ok()) return Fail(std::string(errors.status().message()));
  const std::string text = fmt::format(
      "hbmsim sweep {}: {} tasks; this run's share {} (shard {}/{}): {} already finished, {} ran ({} with an "
      "error line); results in {}\n",
      spec_path, spec->tasks.size(), mine->size(), shard.first, shard.second, mine->size() - to_run.size(),
      to_run.size(), *errors, out_);
  absl::Status s = io::WriteStdout(text);
  return s.ok() ? kExitOk : Fail(std::string(s.message()));
}

// --list: one JSON line per task, and nothing run.
int SweepCommand::ListTasks(const sweep::SweepSpec& spec) const {
  // With --out: only once the folder is known to hold nothing of another
  // sweep (hbmsim.dask asks this before it sends any --task).
  if (!out_.empty() && std::filesystem::exists(out_)) {
    if (absl::Status s = CheckResultsAreThisSweeps(out_, spec, nullptr); !s.ok()) {
      return Fail(std::string(s.message()));
    }
  }
  std::string text;
  for (const SweepTask& t : spec.tasks) text += JsonText(t.Key()) + "\n";
  absl::Status s = io::WriteStdout(text);
  return s.ok() ? kExitOk : Fail(std::string(s.message()));
}

// This run's share: the tasks of --shard I/N (all by default), or the one --task names.
absl::StatusOr<std::vector<const SweepTask*>> SweepCommand::TasksOfThisRun(const sweep::SweepSpec& spec,
                                                                           std::pair<size_t, size_t>& shard) const {
  if (!shard_.empty()) {
    absl::StatusOr<std::pair<size_t, size_t>> s = sweep::ParseShard(shard_);
    if (!s.ok()) return s.status();
    shard = *s;
  }
  std::vector<const SweepTask*> mine;
  for (const SweepTask& t : spec.tasks) {
    if (t.index % shard.second == shard.first) mine.push_back(&t);
  }
  if (!task_.empty()) {
    const uint64_t k = *ParseU64(task_);
    if (k >= spec.tasks.size()) {
      return absl::InvalidArgumentError(fmt::format("--task {}: the spec has {} tasks", k, spec.tasks.size()));
    }
    mine = {&spec.tasks[k]};
  }
  return mine;
}

absl::StatusOr<size_t> SweepCommand::RunTasks(const std::vector<const SweepTask*>& to_run) const {
  std::atomic<size_t> errors{0};
  std::vector<std::string> write_errors(to_run.size());
  ParallelFor(to_run.size(), jobs_, [&](size_t i) {
    const TaskLine line = RunTask(*to_run[i], out_);
    if (line.error) ++errors;
    absl::StatusOr<std::unique_ptr<io::OutputFile>> f = io::OutputFile::Create(out_ + "/" + to_run[i]->FileName());
    absl::Status s = f.ok() ? (*f)->Write(line.text) : f.status();
    if (s.ok()) s = (*f)->Commit();
    if (!s.ok()) write_errors[i] = std::string(s.message());
  });
  for (const std::string& e : write_errors) {
    if (!e.empty()) return absl::InternalError(e);
  }
  return errors.load();
}

int SweepCommand::RunReport(const std::string& dir) {
  // Every result file is an input: `--csv DIR/task-000000.json` would replace one.
  absl::StatusOr<std::vector<std::string>> results = sweep::ResultFiles(dir);
  if (!results.ok()) return Fail(std::string(results.status().message()));
  std::vector<io::NamedPath> inputs;
  for (const std::string& path : *results) inputs.push_back({"result", path});
  absl::StatusOr<io::OutputSet> outputs = io::OutputSet::Open(inputs, {{"--csv", csv_}, {"--html", html_}});
  if (!outputs.ok()) return Fail(std::string(outputs.status().message()));
  absl::StatusOr<sweep::SweepSummary> summary = sweep::SummarizeResults(dir);
  if (!summary.ok()) return Fail(std::string(summary.status().message()));
  if (absl::Status s = io::WriteStdout(sweep::SummaryText(*summary)); !s.ok()) return Fail(std::string(s.message()));
  if (absl::Status s = outputs->Write("--csv", sweep::SummaryCsv(*summary)); !s.ok()) {
    return Fail(std::string(s.message()));
  }
  if (absl::Status s = outputs->Write("--html", sweep::SummaryHtml(*summary)); !s.ok()) {
    return Fail(std::string(s.message()));
  }
  if (absl::Status s = outputs->CommitAll(); !s.ok()) return Fail(std::string(s.message()));
  return kExitOk;
}

const CommandRegistration kSweep(
    "sweep", "run recordings x allocators x settings x (limits | size | advise) as sharded, resumable tasks",
    []() -> std::unique_ptr<Command> { return std::make_unique<SweepCommand>(); });

}  // namespace
}  // namespace hbmsim::sim::cli
