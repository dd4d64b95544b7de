// The cost of `hbmsim size` as a multiple of one full replay of the same
// trace (issue 5's target: <= 12x; issue 20's: <= 5x for bfc and torch), on
// two generated traces of about 1,000,000 events, text:
//   churn     500,000 allocs and their frees, a working set of about 1,500
//             live buffers with log-uniform sizes from 256 B to 16 MiB and
//             random lifetimes, seeded (seed printed): no structure, so runs
//             at nearby limits part early and share little;
//   training  `hbmsim gen training --layers 24 --micro-batches 4 --steps 700
//             --seed 1` (1.02 M events, tags on every line): the steps repeat,
//             as a training job's do (rows training/...).
//
// BM_SizeOverReplay/POLICY/shared times, back to back:
//   size    hbmsim size's path: a survey pass, then the search (--jobs = all
//           cores), its probes shared (sim/whatif/checkpoints.h: one read of
//           the trace into memory, then trials resumed from checkpoints);
//   replay  hbmsim replay's path at the answer: OpenTrace + ReplayEngine +
//           the policy, the text parsed as it streams;
// and reports size_over_replay = size / replay. .../unshared: the same with
// SizeOptions::share_trials off (every probe a trial that reads the trace
// again: the method before issue 20), so one run shows before and after.
// POLICY: bfc and torch, default options (issue 20's targets); bfc with
// allow_growth and cuda_async, whose probes resume from checkpoints since
// issue 20 round 8, torch with expandable segments since round 9, and
// TensorFlow's GPU allocator under allow_growth (garbage collection and region
// coalescing on) since round 11 (bench/README.md).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "fmt/format.h"
#include "sim/all_layers.h"
#include "sim/config/allocator_config.h"
#include "trace/formats/format_table.h"
#include "sim/engine/replay_engine.h"
#include "sim/scenario/scenario.h"
#include "sim/whatif/checkpoints.h"
#include "sim/whatif/size_search.h"
#include "sim/whatif/thread_pool.h"
#include "trace/binary/trace_sink.h"
#include "trace/gen/generators.h"

namespace hbmsim {
namespace {

constexpr uint64_t kSeed = 20261122;
constexpr int kEvents = 1'000'000;

const std::string& ChurnTracePath() {
  static const std::string path = [] {
    const std::string p = "/tmp/hbmsim_whatif_bench.trace";
    std::mt19937_64 rng(kSeed);
    std::uniform_real_distribution<double> unit(0, 1);
    std::ofstream out(p, std::ios::binary);
    out << "# hbmsim-trace v1\n";
    std::vector<uint64_t> live;
    uint64_t next = 1;
    int events = 0;
    while (events < kEvents) {
      const bool do_free =
          !live.empty() && (live.size() > 1500 || (events + live.size() >= kEvents) || unit(rng) < 0.5);
      if (do_free) {
        const size_t i = rng() % live.size();
        out << "free " << live[i] << "\n";
        live[i] = live.back();
        live.pop_back();
      } else {
        const uint64_t bytes = static_cast<uint64_t>(std::exp2(8 + 16 * unit(rng)));
        out << "alloc " << next << " " << bytes << "\n";
        live.push_back(next++);
      }
      ++events;
    }
    std::fprintf(stderr, "whatif_bench: %d events, seed %llu, %s\n", events,
                 static_cast<unsigned long long>(kSeed), p.c_str());
    return p;
  }();
  return path;
}

const std::string& TrainingTracePath() {
  static const std::string path = [] {
    const std::string p = "/tmp/hbmsim_whatif_bench_training.trace";
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    std::unique_ptr<TraceSink> sink = *MakeTraceSink(out, "text");
    gen::TrainingParams params;
    params.layers = 24;
    params.micro_batches = 4;
    params.steps = 700;
    params.seed = 1;
    absl::Status s = sink->WriteHeader(gen::Metadata(params));
    if (s.ok()) s = gen::GenerateTraining(params, [&](const Event& e) { return sink->Write(e); });
    if (s.ok()) s = sink->Finish();
    out.flush();
    // A short trace would time a different job: no number rather than a wrong one.
    if (!s.ok() || !out) {
      std::fprintf(stderr, "whatif_bench: cannot write %s: %s\n", p.c_str(),
                   s.ok() ? "write failed" : std::string(s.message()).c_str());
      std::abort();
    }
    std::fprintf(stderr, "whatif_bench: training trace %s\n", p.c_str());
    return p;
  }();
  return path;
}

enum class Workload { kChurn, kTraining };
// Written on first use: not part of any time.
const std::string& TracePath(Workload w) { return w == Workload::kChurn ? ChurnTracePath() : TrainingTracePath(); }

// "NAME", or "NAME:KEY=VALUE:KEY=VALUE..." for its settings, as the rows below name them.
AllocatorConfig Policy(const std::string& spec) {
  size_t colon = spec.find(':');
  AllocatorConfig c = *ResolveAllocator(BuiltinPolicies(), spec.substr(0, colon));
  while (colon != std::string::npos) {
    const size_t next = spec.find(':', colon + 1);
    if (absl::Status s = ApplySetOption(c, spec.substr(colon + 1, next - colon - 1)); !s.ok()) {
      std::fprintf(stderr, "whatif_bench: %s\n", std::string(s.message()).c_str());
      std::abort();
    }
    colon = next;
  }
  return c;
}

double FullReplaySeconds(const std::string& path, const char* policy, Bytes limit) {
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<EventReader> reader = *OpenTrace(path);
  std::unique_ptr<Allocator> a = *BuildAllocator(Policy(policy), limit);
  ReplayEngine engine(*a, ReplayOptions{});
  benchmark::DoNotOptimize(engine.Run(*reader));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double SizeSeconds(const std::string& path, const char* policy, bool shared, uint64_t* min_limit,
                   uint64_t* probes) {
  const auto start = std::chrono::steady_clock::now();
  const Scenario scenario = *OpenScenario(path, ScenarioRequest{});
  const AllocatorConfig config = Policy(policy);
  // `hbmsim size`'s own path: survey, leader behind it, search.
  const SizeResult r = SizeScenario(scenario, config, SizeOptions{256, DefaultJobs(), shared})->result;
  *min_limit = r.min_bytes_limit.value();
  *probes = r.probes.size();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BM_SizeOverReplay(benchmark::State& state, Workload w, const char* policy, bool shared) {
  const std::string& path = TracePath(w);
  uint64_t min_limit = 0, probes = 0;
  double replay = 0, size = 0;
  for (auto _ : state) {
    size = SizeSeconds(path, policy, shared, &min_limit, &probes);
    replay = FullReplaySeconds(path, policy, Bytes(min_limit));  // the full replay at the answer: every event replayed
  }
  state.counters["replay_s"] = replay;
  state.counters["size_s"] = size;
  state.counters["size_over_replay"] = size / replay;
  state.counters["min_bytes_limit"] = static_cast<double>(min_limit);
  state.counters["probes"] = static_cast<double>(probes);
  state.counters["jobs"] = DefaultJobs();
}

// TensorFlow's GPU allocator under allow_growth (configs/bfc_tensorflow.yaml with
// allow_growth=true): windows since issue 20 round 11.
constexpr char kTfGrowth[] = "bfc:allow_growth=true:garbage_collection=true:region_coalescing=true";

// Each row runs shared and, on churn, unshared (the method before issue 20).
struct Row {
  const char* name;
  const char* policy;
  bool training;  // also a training/... row
};
constexpr Row kRows[] = {
    {"bfc", "bfc", true},
    {"torch", "torch", true},
    {"bfc_allow_growth", "bfc:allow_growth=true", false},
    {"tf_allow_growth", kTfGrowth, true},
    {"cuda_async", "cuda_async", false},
    {"torch_expandable", "torch:expandable_segments=true", false},
};

void Register(const std::string& name, Workload w, const char* policy, bool shared) {
  benchmark::RegisterBenchmark(name.c_str(), BM_SizeOverReplay, w, policy, shared)
      ->Unit(benchmark::kSecond)
      ->Iterations(1)
      ->UseRealTime();
}

const bool kRegistered = [] {
  for (const Row& r : kRows) {
    Register(fmt::format("BM_SizeOverReplay/{}/shared", r.name), Workload::kChurn, r.policy, true);
    Register(fmt::format("BM_SizeOverReplay/{}/unshared", r.name), Workload::kChurn, r.policy, false);
  }
  for (const Row& r : kRows) {
    if (r.training) Register(fmt::format("BM_SizeOverReplay/training/{}/shared", r.name), Workload::kTraining, r.policy, true);
  }
  return true;
}();

}  // namespace
}  // namespace hbmsim

BENCHMARK_MAIN();
