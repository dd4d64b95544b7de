// The cost of `hbmsim size` as a multiple of one full replay of the same
// trace (issue 5's target: <= 12x; issue 20's: <= 5x for bfc and torch). The trace is generated: 1,000,000 events
// (500,000 allocs and their frees), a working set of about 1,500 live buffers
// with log-uniform sizes from 256 B to 16 MiB, seeded (seed printed).
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
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "fmt/format.h"
#include "sim/config/allocator_config.h"
#include "trace/formats/format_table.h"
#include "sim/engine/replay_engine.h"
#include "sim/scenario/scenario.h"
#include "sim/whatif/checkpoints.h"
#include "sim/whatif/size_search.h"
#include "sim/whatif/thread_pool.h"

namespace hbmsim {
namespace {

constexpr uint64_t kSeed = 20261122;
constexpr int kEvents = 1'000'000;

const std::string& TracePath() {
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

double FullReplaySeconds(const char* policy, Bytes limit) {
  const std::string& path = TracePath();
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<EventReader> reader = *OpenTrace(path);
  std::unique_ptr<Allocator> a = *BuildAllocator(Policy(policy), limit);
  ReplayEngine engine(*a, ReplayOptions{});
  benchmark::DoNotOptimize(engine.Run(*reader));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double SizeSeconds(const char* policy, bool shared, uint64_t* min_limit, uint64_t* probes) {
  const std::string& path = TracePath();  // written on first use: not part of the time
  const auto start = std::chrono::steady_clock::now();
  const Scenario scenario = *OpenScenario(path, ScenarioRequest{});
  const AllocatorConfig config = Policy(policy);
  // `hbmsim size`'s own path: survey, leader behind it, search.
  const SizeResult r = SizeScenario(scenario, config, SizeOptions{256, DefaultJobs(), shared})->result;
  *min_limit = r.min_bytes_limit.value();
  *probes = r.probes.size();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BM_SizeOverReplay(benchmark::State& state, const char* policy, bool shared) {
  uint64_t min_limit = 0, probes = 0;
  double replay = 0, size = 0;
  for (auto _ : state) {
    size = SizeSeconds(policy, shared, &min_limit, &probes);
    replay = FullReplaySeconds(policy, Bytes(min_limit));  // the full replay at the answer: every event replayed
  }
  state.counters["replay_s"] = replay;
  state.counters["size_s"] = size;
  state.counters["size_over_replay"] = size / replay;
  state.counters["min_bytes_limit"] = static_cast<double>(min_limit);
  state.counters["probes"] = static_cast<double>(probes);
  state.counters["jobs"] = DefaultJobs();
}
BENCHMARK_CAPTURE(BM_SizeOverReplay, bfc/shared, "bfc", true)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
BENCHMARK_CAPTURE(BM_SizeOverReplay, bfc/unshared, "bfc", false)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_SizeOverReplay, torch/shared, "torch", true)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_SizeOverReplay, torch/unshared, "torch", false)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_SizeOverReplay, bfc_allow_growth/shared, "bfc:allow_growth=true", true)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_SizeOverReplay, bfc_allow_growth/unshared, "bfc:allow_growth=true", false)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();
// TensorFlow's GPU allocator under allow_growth (configs/bfc_tensorflow.yaml with
// allow_growth=true): windows since issue 20 round 11.
constexpr char kTfGrowth[] = "bfc:allow_growth=true:garbage_collection=true:region_coalescing=true";
BENCHMARK_CAPTURE(BM_SizeOverReplay, tf_allow_growth/shared, kTfGrowth, true)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_SizeOverReplay, tf_allow_growth/unshared, kTfGrowth, false)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_SizeOverReplay, cuda_async/shared, "cuda_async", true)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_SizeOverReplay, cuda_async/unshared, "cuda_async", false)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_SizeOverReplay, torch_expandable/shared, "torch:expandable_segments=true", true)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_SizeOverReplay, torch_expandable/unshared, "torch:expandable_segments=true", false)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();

}  // namespace
}  // namespace hbmsim

BENCHMARK_MAIN();
