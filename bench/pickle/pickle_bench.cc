// Parse speed of the largest real snapshot (gen5_medium_512_training.pickle,
// 3.9 MB, from HBMSIM_BENCH_DATA: scripts/bench-real-data.sh): the safe unpickler alone, and unpickle + snapshot model. Compare
// BM_Unpickle's CPU time with CPython's C unpickler on the same bytes:
//   python3 bench/pickle/time_python_pickle.py
// (on a shared, loaded machine compare CPU times, not wall times).
#include <string>

#include "bench/common/bench_data.h"
#include "benchmark/benchmark.h"
#include "sim/all_layers.h"
#include "trace/pickle/unpickler.h"
#include "trace/torch/snapshot.h"

namespace hbmsim {
namespace {


const std::string& FileBytes() {
  static const std::string bytes =
      *ReadWholeFile(bench::BenchDataFile("torch_snapshots/gen5_medium_512_training.pickle"));
  return bytes;
}

void BM_Unpickle(benchmark::State& state) {
  const std::string& bytes = FileBytes();
  for (auto _ : state) {
    // The tree owns its input; copying the file is not parsing it.
    state.PauseTiming();
    std::string copy = bytes;
    state.ResumeTiming();
    absl::StatusOr<PickleTree> tree = Unpickle(std::move(copy), "bench");
    if (!tree.ok()) state.SkipWithError("unpickle failed");
    benchmark::DoNotOptimize(tree);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes.size()));
}
BENCHMARK(BM_Unpickle)->Unit(benchmark::kMillisecond);

void BM_UnpickleAndParseSnapshot(benchmark::State& state) {
  const std::string& bytes = FileBytes();
  for (auto _ : state) {
    // The tree owns its input; copying the file is not parsing it.
    state.PauseTiming();
    std::string copy = bytes;
    state.ResumeTiming();
    absl::StatusOr<PickleTree> tree = Unpickle(std::move(copy), "bench");
    if (!tree.ok()) state.SkipWithError("unpickle failed");
    absl::StatusOr<Snapshot> snap = ParseSnapshot(*tree);
    if (!snap.ok()) state.SkipWithError("parse failed");
    benchmark::DoNotOptimize(snap);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes.size()));
}
BENCHMARK(BM_UnpickleAndParseSnapshot)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hbmsim

BENCHMARK_MAIN();
