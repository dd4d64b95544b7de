// Whole replay ÷ policy loop (issue 48 item 9): how much of `hbmsim replay`
// is not the allocator. For each policy and each of the two traces,
//
//   Loop/POLICY/WORKLOAD         the trace's allocs and frees, preloaded into
//                                memory, straight into the policy (no reader,
//                                no engine, no observer): what the real
//                                allocator's loop is compared with;
//   Whole/POLICY/WORKLOAD/FORMAT/MODE
//                                the whole `hbmsim replay` process (spawned,
//                                start-up, reading, engine, report), from
//                                .hbt or text, with the default report or
//                                `--quiet --no-advice`.
//
// Both are CPU seconds (the loop's thread; the child's user + system), the
// least of HBMSIM_BENCH_ROUNDS runs (5 unless set), so the ratio `over_loop`
// (Whole ÷ its Loop, same run) moves less with the neighbours' load than
// wall time or a mean would: on a shared 2-core machine a run only ever
// gets slower. The traces are the issue's, made by
// `hbmsim gen` under $TMPDIR/hbmsim_bench/ on first use:
//
//   churn:    hbmsim gen churn --events 2000000 --seed 1
//   training: hbmsim gen training --seed 3 --layers 24 --micro-batches 4 --steps 2760
//
//   build/bench/replay/replay_bench --benchmark_filter='^(Loop|Whole)/'
//   HBMSIM_BENCH_CLI=OLD/hbmsim build/bench/replay/replay_bench ...   # another build's CLI in the Whole rows
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "benchmark/benchmark.h"
#include "fmt/format.h"
#include "sim/all_layers.h"
#include "sim/config/allocator_config.h"
#include "sim/config/policy_registry.h"
#include "trace/formats/format_table.h"

extern char** environ;

namespace hbmsim {
namespace {

constexpr const char* kWholeLimit = "64GiB";

struct WholeWorkload {
  const char* name;
  std::vector<std::string> gen_args;  // after `hbmsim gen`
};

const std::vector<WholeWorkload>& WholeWorkloads() {
  static const std::vector<WholeWorkload> kWorkloads = {
      {"churn", {"churn", "--events", "2000000", "--seed", "1"}},
      {"training", {"training", "--seed", "3", "--layers", "24", "--micro-batches", "4", "--steps", "2760"}},
  };
  return kWorkloads;
}

// The CLI the Whole rows run: this build's, or HBMSIM_BENCH_CLI (another
// build's binary, to compare two in one session).
std::string Cli() {
  const char* other = std::getenv("HBMSIM_BENCH_CLI");
  return other != nullptr && *other != '\0' ? std::string(other) : std::string(HBMSIM_BINARY);
}

int Rounds() {
  const char* env = std::getenv("HBMSIM_BENCH_ROUNDS");
  return env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : 5;
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double Seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6; }

// Runs `args` (argv[0] included) with stdout and stderr to /dev/null; its
// exit status and CPU seconds (user + system), or nullopt when it could not start.
struct ChildRun {
  int exit_code = -1;
  double cpu_s = 0;
};
std::optional<ChildRun> RunChild(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return std::nullopt;
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) return std::nullopt;
  return ChildRun{WIFEXITED(status) ? WEXITSTATUS(status) : -1, Seconds(usage.ru_utime) + Seconds(usage.ru_stime)};
}

// The workload's trace as `ext` (hbt or trace), generated once by the CLI.
std::string WholeTracePath(const WholeWorkload& w, const std::string& ext) {
  const std::string dir = std::filesystem::temp_directory_path().string() + "/hbmsim_bench";
  std::filesystem::create_directories(dir);
  const std::string path = fmt::format("{}/issue48_{}.{}", dir, w.name, ext);
  if (std::filesystem::exists(path)) return path;
  std::vector<std::string> args = {HBMSIM_BINARY, "gen"};
  args.insert(args.end(), w.gen_args.begin(), w.gen_args.end());
  args.insert(args.end(), {"-o", path});  // the CLI writes a temporary and renames it into place
  (void)RunChild(args);
  return path;
}

// A trace's allocs and frees, in memory, with each buffer's handle kept at
// the index of its alloc (slot) so the loop looks nothing up.
struct PreloadedOp {
  bool alloc = false;
  uint32_t slot = 0;
  uint64_t id = 0;
  Bytes bytes;
  StreamId stream;
};

absl::StatusOr<std::vector<PreloadedOp>> Preload(const std::string& path) {
  absl::StatusOr<std::unique_ptr<EventReader>> reader = OpenTrace(path);
  if (!reader.ok()) return reader.status();
  std::vector<PreloadedOp> ops;
  absl::flat_hash_map<uint64_t, uint32_t> slot_of_live;  // looked up, never iterated
  uint32_t allocs = 0;
  Event e;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->Next(e);
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (e.kind == EventKind::kAlloc) {
      slot_of_live[e.id] = allocs;
      ops.push_back({true, allocs++, e.id, e.bytes, e.stream});
    } else if (e.kind == EventKind::kFree) {
      const auto it = slot_of_live.find(e.id);
      if (it == slot_of_live.end()) return absl::InvalidArgumentError(fmt::format("free of {} not live", e.id));
      ops.push_back({false, it->second, e.id, e.bytes, e.stream});
      slot_of_live.erase(it);
    } else if (e.kind != EventKind::kMark) {
      return absl::InvalidArgumentError(fmt::format("{}: the loop replays allocs and frees only", path));
    }
  }
  return ops;
}

// Loop CPU seconds per replay: [policy][workload], for the Whole rows' ratio.
std::map<std::pair<std::string, std::string>, double>& LoopSeconds() {
  static std::map<std::pair<std::string, std::string>, double> seconds;
  return seconds;
}

void BM_Loop(benchmark::State& state, std::string policy, const WholeWorkload* w) {
  const absl::StatusOr<std::vector<PreloadedOp>> ops = Preload(WholeTracePath(*w, "hbt"));
  if (!ops.ok()) {
    state.SkipWithError(std::string(ops.status().message()).c_str());
    return;
  }
  std::vector<Handle> handles(ops->size());
  double best = 0;
  uint64_t failures = 0;
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<Allocator>> built =
        BuildAllocator(DefaultConfig(*BuiltinPolicies().Find(policy)), Bytes::GiB(64));
    if (!built.ok()) {
      state.SkipWithError(std::string(built.status().message()).c_str());
      return;
    }
    Allocator& a = **built;
    failures = 0;
    const double start = ThreadCpuSeconds();
    uint64_t index = 0;
    for (const PreloadedOp& op : *ops) {
      if (op.alloc) {
        AllocRequest req;
        req.id = BufferId(op.id);
        req.bytes = op.bytes;
        req.stream = op.stream;
        req.event = EventIndex(index);
        const AllocResult r = a.Allocate(req);
        handles[op.slot] = r.ok() ? r.handle : kNullHandle;
        failures += r.ok() ? 0 : 1;
      } else if (handles[op.slot] != kNullHandle) {
        a.Free(handles[op.slot]);
      }
      ++index;
    }
    const double cpu = ThreadCpuSeconds() - start;
    if (best == 0 || cpu < best) best = cpu;
  }
  LoopSeconds()[{policy, w->name}] = best;
  state.counters["cpu_s"] = best;
  state.counters["ns_per_op"] = best * 1e9 / static_cast<double>(ops->size());
  state.counters["failures"] = static_cast<double>(failures);
}

void BM_Whole(benchmark::State& state, std::string policy, const WholeWorkload* w, std::string ext, bool quiet) {
  std::vector<std::string> args = {Cli(), "replay", WholeTracePath(*w, ext), "--allocator", policy, "--bytes-limit",
                                   kWholeLimit};
  if (quiet) args.insert(args.end(), {"--quiet", "--no-advice"});
  double best = 0;
  for (auto _ : state) {
    const std::optional<ChildRun> run = RunChild(args);
    if (!run || run->exit_code != 0) {
      state.SkipWithError(fmt::format("hbmsim replay exited {}", run ? run->exit_code : -1).c_str());
      return;
    }
    if (best == 0 || run->cpu_s < best) best = run->cpu_s;
  }
  state.counters["cpu_s"] = best;
  const auto loop = LoopSeconds().find({policy, w->name});
  if (loop != LoopSeconds().end() && loop->second > 0) state.counters["over_loop"] = best / loop->second;
}

}  // namespace

// Every policy that replays online (offline plans from the whole trace, so
// it has no loop of its own), the loops first so each Whole row finds its own.
void RegisterWholeOverLoop() {
  for (const WholeWorkload& w : WholeWorkloads()) {
    for (const PolicySpec& policy : BuiltinPolicies().policies()) {
      if (policy.plan) continue;
      benchmark::RegisterBenchmark(fmt::format("Loop/{}/{}", policy.name, w.name).c_str(), BM_Loop, policy.name, &w)
          ->Iterations(Rounds())
          ->Unit(benchmark::kMillisecond);
    }
    for (const PolicySpec& policy : BuiltinPolicies().policies()) {
      if (policy.plan) continue;
      for (const std::string ext : {"hbt", "trace"}) {
        for (const bool quiet : {false, true}) {
          benchmark::RegisterBenchmark(
              fmt::format("Whole/{}/{}/{}/{}", policy.name, w.name, ext, quiet ? "quiet" : "report").c_str(),
              BM_Whole, policy.name, &w, ext, quiet)
              ->Iterations(Rounds())
              ->Unit(benchmark::kMillisecond)
              ->UseRealTime();
        }
      }
    }
  }
}

}  // namespace hbmsim
