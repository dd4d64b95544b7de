// The cost of `hbmsim scale` (issue 44's targets: predicting and replaying a
// 10,000-event family member < 1 s; --fit-limit over N <= 64 candidates
// < 10 s), as multiples of one replay of the real member, on the shared
// training-step family (from HBMSIM_BENCH_DATA, tiny_train_step_adamw_fp32: ctx
// 128 and 256 recorded, 10,821 and 10,833 trace entries; ctx 512, 10,809):
//
//   BM_Model             read both recordings, align, fit (once per command)
//   BM_PredictAndReplay  synthesize ctx 512 and replay it (attribution on,
//                        as `--to` runs it)
//   BM_ReplayReal        the replay of the real ctx 512, the unit of the ratio
//   BM_FitLimit          --fit-limit 80GiB --step 64 (its probes and the two
//                        full runs at the answer)
//
// Counters: predict_over_replay and fit_limit_over_replay, each CPU time
// per iteration over the real replay's (timed once in the same process,
// before them: 20 runs).
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "bench/common/bench_data.h"
#include "benchmark/benchmark.h"
#include "sim/config/allocator_config.h"
#include "sim/scale/fit_limit.h"
#include "sim/scale/scale_predict.h"
#include "sim/whatif/whatif_common.h"

namespace hbmsim::sim::scale {
namespace {

// A member of the training-step family, from HBMSIM_BENCH_DATA.
std::string Member(int ctx) {
  return bench::BenchDataFile("families/tiny_train_step_adamw_fp32/ctx" + std::to_string(ctx) + ".pickle");
}

std::vector<MemberInput> Inputs() {
  return {{128, Member(128)}, {256, Member(256)}};
}

struct Fixture {
  ScaleModel model;
  std::shared_ptr<const MemberStream> real;
  AllocatorConfig config;
  double replay_seconds = 0;
};

// Built once: the model, the real ctx 512 and the time of its replay.
const Fixture& Get() {
  static const Fixture* fixture = [] {
    auto* f = new Fixture;
    auto members = OpenMembers(Inputs(), ScenarioRequest{});
    auto real = OpenMembers({{512, Member(512)}}, ScenarioRequest{});
    if (!members.ok() || !real.ok()) std::abort();
    f->real = (*real)[0];
    f->model = *BuildScaleModel(*members, 512);
    f->config = *ResolveWithSets("torch", {}, *f->real->scenario);
    constexpr int kRuns = 20;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kRuns; ++i) benchmark::DoNotOptimize(ReplayMember(*f->real, f->config, ""));
    f->replay_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / kRuns;
    return f;
  }();
  return *fixture;
}

void BM_Model(benchmark::State& state) {
  for (auto _ : state) {
    auto members = OpenMembers(Inputs(), ScenarioRequest{});
    benchmark::DoNotOptimize(BuildScaleModel(*members, 512));
  }
}

void BM_PredictAndReplay(benchmark::State& state) {
  const Fixture& f = Get();
  ScaleRunOptions options;
  options.attribute = true;
  for (auto _ : state) benchmark::DoNotOptimize(PredictAt(f.model, f.config, "", 512, options));
  state.counters["predict_over_replay"] = benchmark::Counter(
      f.replay_seconds * static_cast<double>(state.iterations()),
      benchmark::Counter::Flags(benchmark::Counter::kIsRate | benchmark::Counter::kInvert));
}

void BM_ReplayReal(benchmark::State& state) {
  const Fixture& f = Get();
  for (auto _ : state) benchmark::DoNotOptimize(ReplayMember(*f.real, f.config, ""));
}

void BM_FitLimit(benchmark::State& state) {
  const Fixture& f = Get();
  size_t probes = 0;
  for (auto _ : state) {
    absl::StatusOr<FitLimitResult> r = FitLimit(f.model, f.config, Bytes(uint64_t{80} << 30), 64);
    probes = r.ok() ? r->probes.size() : 0;
  }
  state.counters["probes"] = static_cast<double>(probes);
  state.counters["fit_limit_over_replay"] = benchmark::Counter(
      f.replay_seconds * static_cast<double>(state.iterations()),
      benchmark::Counter::Flags(benchmark::Counter::kIsRate | benchmark::Counter::kInvert));
}

BENCHMARK(BM_Model)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReplayReal)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PredictAndReplay)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FitLimit)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hbmsim::sim::scale

BENCHMARK_MAIN();
