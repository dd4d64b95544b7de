// Speed of the `tpu` policy:
//   BM_TpuReplay      replays a generated program of >= 1M buffer ops (a third
//                     of the frees queued) plus program runs; items = ops.
//   BM_TpuCompaction  one Defragment() as a function of live buffers: N
//                     buffers with a hole under every one, all of which move.
#include <map>
#include <optional>
#include <vector>

#include "allocator/tpu/tpu_allocator.h"
#include "benchmark/benchmark.h"
#include "sim/all_layers.h"
#include "tests/common/random_ops.h"

namespace hbmsim {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

const std::vector<testing::Op>& MillionOps() {
  static const std::vector<testing::Op> ops = [] {
    testing::ProgramShape shape;
    shape.num_ops = 1'000'000;
    shape.min_bytes = 512;
    shape.max_bytes = 64 * kMiB;
    shape.free_probability = 0.5;  // the live set random-walks instead of growing without bound
    shape.queued_free_fraction = 0.33;
    return testing::GenerateProgram(/*seed=*/42, shape);
  }();
  return ops;
}

// Replays the ops; every 1000th op loads or runs one of 8 programs.
int64_t Replay(TpuAllocator& a, const std::vector<testing::Op>& ops) {
  std::vector<Handle> handles(ops.size() + 2, kNullHandle);  // ids are 1..n
  int64_t failures = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const testing::Op& op = ops[i];
    if (i % 1000 == 0) {
      const ProgramId pid(i / 1000 % 8);
      if (i < 8000)
        a.LoadProgram(pid, Bytes(32 * kMiB), EventIndex(i));
      else
        a.RunProgram(pid, EventIndex(i));
    }
    switch (op.kind) {
      case testing::OpKind::kAlloc: {
        AllocRequest req;
        req.id = BufferId(op.id);
        req.bytes = Bytes(op.bytes);
        req.event = EventIndex(i);
        const AllocResult r = a.Allocate(req);
        handles[op.id] = r.handle;
        failures += r.ok() ? 0 : 1;
        break;
      }
      case testing::OpKind::kFree:
        a.Free(handles[op.id]);
        break;
      case testing::OpKind::kRequestFree:
        a.RequestFree(handles[op.id]);
        break;
      case testing::OpKind::kCompleteFree:
        a.CompleteFree(handles[op.id]);
        break;
    }
  }
  return failures;
}

void BM_TpuReplay(benchmark::State& state) {
  const std::vector<testing::Op>& ops = MillionOps();
  TpuOptions options;
  options.hbm_bytes = Bytes::GiB(static_cast<uint64_t>(state.range(0)));
  int64_t failures = 0;
  for (auto _ : state) {
    TpuAllocator a(options);
    failures = Replay(a, ops);
    benchmark::DoNotOptimize(a.GetStats());
    state.counters["defragmentations"] = static_cast<double>(a.counters().defragmentations);
    state.counters["programs_evicted"] = static_cast<double>(a.counters().programs_evicted);
  }
  state.counters["failures"] = static_cast<double>(failures);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(ops.size()));
}
BENCHMARK(BM_TpuReplay)->Arg(16)->Arg(4)->Unit(benchmark::kMillisecond);

// N live 1 MiB... buffers of 512 B with a 512 B hole under each: every one moves.
void BuildFragmented(TpuAllocator& a, int64_t live) {
  std::vector<Handle> handles;
  for (int64_t id = 0; id < 2 * live; ++id) {
    AllocRequest req;
    req.id = BufferId(static_cast<uint64_t>(id));
    req.bytes = Bytes(512);
    handles.push_back(a.Allocate(req).handle);
  }
  for (int64_t id = 0; id < 2 * live; id += 2) a.Free(handles[static_cast<size_t>(id)]);
}

void BM_TpuCompaction(benchmark::State& state) {
  const int64_t live = state.range(0);
  TpuOptions options;
  options.hbm_bytes = Bytes(static_cast<uint64_t>(live) * 1024 + kMiB);
  int64_t moved = 0;
  // Built and torn down with the clock stopped: the teardown of the last
  // iteration's 200 k blocks and 100 k buffer records (glibc trimming ~25 MB
  // of heap) is not compaction, and used to be timed with it.
  std::optional<TpuAllocator> a;
  for (auto _ : state) {
    state.PauseTiming();
    a.reset();
    a.emplace(options);
    BuildFragmented(*a, live);
    state.ResumeTiming();
    moved = a->Defragment();
    benchmark::DoNotOptimize(moved);
  }
  state.counters["buffers_moved"] = static_cast<double>(moved);
  state.SetItemsProcessed(state.iterations() * live);
}
// A short MinTime: each iteration builds its layout with the clock stopped
// (0.1-0.7 s at 100 k on this VM), which the default 0.5 s of timed
// compaction would repeat a thousand times.
BENCHMARK(BM_TpuCompaction)->Arg(1000)->Arg(10000)->Arg(100000)->MinTime(0.005)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace hbmsim

BENCHMARK_MAIN();
