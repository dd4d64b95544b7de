// Macro benchmarks: replay a generated churn trace (10 M events by default,
// HBMSIM_BENCH_EVENTS to change) through every registered policy, from the
// .hbt form and from text, against a `null` policy that only counts (the
// floor: decoding, validation and the engine's bookkeeping). Also the bare
// parse throughput of both formats. Rates are per CPU second of this thread,
// since wall time on a shared machine measures the neighbours.
//
// `Training/...` replays a generated training trace (`hbmsim gen training
// --layers 24 --micro-batches 4 --steps N`, 2.9 M events at the default
// HBMSIM_BENCH_TRAINING_STEPS=2000): few sizes, long-lived weights, and every
// text line carries attributes (`alloc 5 4194304 t=4 tag=activation`), so
// Training/<policy>/trace against .../hbt is the text-with-attributes rate.
//
//   build-scale/bench/replay/replay_bench --benchmark_min_time=0.01
#include <time.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "allocator/core/null_allocator.h"
#include "benchmark/benchmark.h"
#include "fmt/format.h"
#include "sim/all_layers.h"
#include "sim/config/allocator_config.h"
#include "sim/config/policy_registry.h"
#include "trace/formats/format_table.h"
#include "sim/engine/replay_engine.h"
#include "trace/binary/trace_sink.h"
#include "trace/gen/generators.h"

namespace hbmsim {
namespace {

constexpr Bytes kLimit = Bytes::GiB(64);

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* env = std::getenv(name);
  return env != nullptr ? std::strtoull(env, nullptr, 10) : fallback;
}
uint64_t BenchEvents() { return EnvOr("HBMSIM_BENCH_EVENTS", 10000000); }
uint64_t TrainingSteps() { return EnvOr("HBMSIM_BENCH_TRAINING_STEPS", 2000); }

enum class Workload { kChurn, kTraining };

// The generated trace in `format`, written once per size and seed.
std::string TracePath(Workload w, const std::string& ext) {
  const std::string dir = std::filesystem::temp_directory_path().string() + "/hbmsim_bench";
  std::filesystem::create_directories(dir);
  const std::string path = w == Workload::kChurn
                               ? fmt::format("{}/churn_{}_seed1.{}", dir, BenchEvents(), ext)
                               : fmt::format("{}/training_l24_mb4_{}_seed1.{}", dir, TrainingSteps(), ext);
  if (std::filesystem::exists(path)) return path;
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    std::unique_ptr<TraceSink> sink = *MakeTraceSink(out, ext == "hbt" ? "binary" : "text");
    const auto write = [&](const Event& e) { return sink->Write(e); };
    if (w == Workload::kChurn) {
      gen::ChurnParams p;
      p.events = BenchEvents();
      p.seed = 1;
      (void)sink->WriteHeader(gen::Metadata(p));
      (void)gen::GenerateChurn(p, write);
    } else {
      gen::TrainingParams p;
      p.layers = 24;
      p.micro_batches = 4;
      p.steps = TrainingSteps();
      p.seed = 1;
      (void)sink->WriteHeader(gen::Metadata(p));
      (void)gen::GenerateTraining(p, write);
    }
    (void)sink->Finish();
  }
  std::filesystem::rename(tmp, path);
  return path;
}

// Events per CPU second of the null replay: [workload][binary, text].
double g_null_rate[2][2] = {{0, 0}, {0, 0}};

void BM_Parse(benchmark::State& state, Workload w, std::string ext) {
  const std::string path = TracePath(w, ext);
  uint64_t events = 0;
  for (auto _ : state) {
    std::unique_ptr<EventReader> reader = *OpenTrace(path);
    Event e;
    while (*reader->Next(e)) ++events;
  }
  state.SetItemsProcessed(static_cast<int64_t>(events));
  state.SetBytesProcessed(static_cast<int64_t>(std::filesystem::file_size(path) * state.iterations()));
}

void BM_Replay(benchmark::State& state, Workload w, std::string policy, std::string ext) {
  const std::string path = TracePath(w, ext);
  uint64_t events = 0;
  double cpu = 0;
  for (auto _ : state) {
    std::unique_ptr<Allocator> allocator;
    if (policy == "null") {
      allocator = std::make_unique<NullAllocator>();
    } else {
      AllocatorConfig config = DefaultConfig(*BuiltinPolicies().Find(policy));
      absl::StatusOr<std::unique_ptr<Allocator>> a = BuildAllocator(config, kLimit);
      if (!a.ok()) {
        state.SkipWithError(std::string(a.status().message()).c_str());
        return;
      }
      allocator = *std::move(a);
    }
    std::unique_ptr<EventReader> reader = *OpenTrace(path);
    ReplayEngine engine(*allocator, ReplayOptions{});
    const double start = CpuSeconds();
    absl::StatusOr<ReplaySummary> summary = engine.Run(*reader);
    cpu += CpuSeconds() - start;
    if (!summary.ok()) {
      state.SkipWithError(std::string(summary.status().message()).c_str());
      return;
    }
    events += summary->events_read;
    state.counters["failures"] = static_cast<double>(summary->failures);
  }
  const double rate = static_cast<double>(events) / cpu;
  double& floor = g_null_rate[static_cast<int>(w)][ext == "hbt" ? 0 : 1];
  if (policy == "null") floor = rate;
  state.counters["Mevents_per_cpu_s"] = rate / 1e6;
  if (floor > 0) state.counters["vs_null"] = rate / floor;
  state.SetItemsProcessed(static_cast<int64_t>(events));
}

void RegisterAll() {
  for (const Workload w : {Workload::kChurn, Workload::kTraining}) {
    // The churn keeps its historical names (Parse/hbt, Replay/bfc/hbt, ...).
    const std::string prefix = w == Workload::kChurn ? "" : "Training/";
    for (const std::string ext : {"hbt", "trace"}) {
      benchmark::RegisterBenchmark(fmt::format("{}Parse/{}", prefix, ext).c_str(), BM_Parse, w, ext)
          ->Unit(benchmark::kMillisecond)
          ->MeasureProcessCPUTime();
      benchmark::RegisterBenchmark(fmt::format("{}Replay/null/{}", prefix, ext).c_str(), BM_Replay, w, "null",
                                   ext)
          ->Unit(benchmark::kMillisecond);
      for (const PolicySpec& policy : BuiltinPolicies().policies()) {
        benchmark::RegisterBenchmark(fmt::format("{}Replay/{}/{}", prefix, policy.name, ext).c_str(),
                                     BM_Replay, w, policy.name, ext)
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}

}  // namespace

void RegisterWholeOverLoop();  // whole_over_loop.cc

}  // namespace hbmsim

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  hbmsim::RegisterAll();
  hbmsim::RegisterWholeOverLoop();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
