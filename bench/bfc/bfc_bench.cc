// Throughput of the bfc policy on its own (no trace, no engine).
//
// BM_ReplayProgram: a seeded 1 M-op program at steady occupancy (a few thousand
// live buffers, log-uniform sizes 256 B .. 64 MiB, 64 GiB limit so nothing
// fails), replayed from scratch per iteration; items = alloc and free events.
// BM_AllocFreePair: one free and one alloc at a fixed number of live buffers;
// items = events (two per pair).
// BM_FragmentedBin: the same pair against one bin of many free chunks.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "allocator/bfc/bfc_allocator.h"
#include "benchmark/benchmark.h"
#include "sim/all_layers.h"

namespace hbmsim {
namespace {

constexpr uint64_t kSeed = 20240617;
constexpr uint64_t kLimit = uint64_t{64} << 30;

struct BenchOp {
  bool alloc;
  uint32_t slot;   // which live buffer
  uint64_t bytes;  // alloc only
};

uint64_t LogUniformSize(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> exponent(8.0, 26.0);  // 256 B .. 64 MiB
  return static_cast<uint64_t>(std::exp2(exponent(rng)));
}

// Fills `target_live` buffers, then alternates randomly between freeing a
// random live buffer and allocating a new one, so occupancy hovers there.
std::vector<BenchOp> MakeSteadyProgram(size_t num_ops, uint32_t target_live) {
  std::mt19937_64 rng(kSeed);
  std::vector<BenchOp> ops;
  ops.reserve(num_ops);
  std::vector<uint32_t> live, idle;
  for (uint32_t s = 2 * target_live; s-- > 0;) idle.push_back(s);
  while (ops.size() < num_ops) {
    const bool grow = live.size() < target_live / 2 || (live.size() < 2 * target_live - 1 && rng() % 2 == 0);
    if (grow) {
      const uint32_t slot = idle.back();
      idle.pop_back();
      live.push_back(slot);
      ops.push_back({true, slot, LogUniformSize(rng)});
    } else {
      const size_t i = rng() % live.size();
      ops.push_back({false, live[i], 0});
      idle.push_back(live[i]);
      live[i] = live.back();
      live.pop_back();
    }
  }
  return ops;
}

BfcOptions BenchOptions(bool growth) {
  BfcOptions o;
  o.memory_limit = Bytes(kLimit);
  o.allow_growth = growth;
  o.region_coalescing = growth;
  return o;
}

void BM_ReplayProgram(benchmark::State& state) {
  const std::vector<BenchOp> ops = MakeSteadyProgram(1 << 20, 4096);
  std::vector<Handle> handles(2 * 4096);
  int64_t failures = 0;
  for (auto _ : state) {
    BfcAllocator a(BenchOptions(state.range(0) != 0));
    AllocRequest req;
    for (const BenchOp& op : ops) {
      if (op.alloc) {
        req.bytes = Bytes(op.bytes);
        req.id = BufferId(op.slot);
        const AllocResult r = a.Allocate(req);
        failures += r.ok() ? 0 : 1;
        handles[op.slot] = r.handle;
      } else {
        a.Free(handles[op.slot]);
      }
    }
    benchmark::DoNotOptimize(a.GetStats().bytes_in_use);
  }
  if (failures != 0) state.SkipWithError("allocations failed: the limit is too small for the program");
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(ops.size()));
}
BENCHMARK(BM_ReplayProgram)->ArgName("growth")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_AllocFreePair(benchmark::State& state) {
  const auto live_count = static_cast<uint32_t>(state.range(0));
  std::mt19937_64 rng(kSeed);
  std::vector<uint64_t> sizes(1 << 16);
  for (uint64_t& s : sizes) s = LogUniformSize(rng);
  std::vector<uint32_t> victims(1 << 16);
  for (uint32_t& v : victims) v = static_cast<uint32_t>(rng() % live_count);

  BfcAllocator a(BenchOptions(false));
  AllocRequest req;
  std::vector<Handle> live(live_count);
  for (uint32_t i = 0; i < live_count; ++i) {
    req.bytes = Bytes(sizes[i % sizes.size()]);
    live[i] = a.Allocate(req).handle;
  }
  size_t i = 0;
  for (auto _ : state) {
    const uint32_t victim = victims[i & (victims.size() - 1)];
    a.Free(live[victim]);
    req.bytes = Bytes(sizes[i & (sizes.size() - 1)]);
    live[victim] = a.Allocate(req).handle;
    ++i;
  }
  state.SetItemsProcessed(state.iterations() * 2);
}
BENCHMARK(BM_AllocFreePair)->ArgName("live")->Arg(256)->Arg(4096);

// The bins' worst case: one bin holding `free_chunks` free chunks of equal
// size, each pinned between two live ones so none can coalesce (a badly
// fragmented trace). Each iteration frees a random live chunk of that size
// and allocates one back: an insert into and a best-fit take out of that bin.
void BM_FragmentedBin(benchmark::State& state) {
  const auto free_chunks = static_cast<uint32_t>(state.range(0));
  constexpr uint64_t kChunk = 1024;  // bin 2
  BfcAllocator a(BenchOptions(false));
  AllocRequest req;
  req.bytes = Bytes(kChunk);
  // Layout: [hole][pin][hole][pin]... where holes are freed afterwards.
  std::vector<Handle> holes(free_chunks), pins(free_chunks);
  for (uint32_t i = 0; i < free_chunks; ++i) {
    holes[i] = a.Allocate(req).handle;
    pins[i] = a.Allocate(req).handle;
  }
  for (Handle h : holes) a.Free(h);
  // Live chunks of that size, recycled at random: each free files a chunk
  // between two pins, each alloc takes the lowest-addressed one back.
  std::vector<Handle> live(free_chunks / 2);
  for (Handle& h : live) h = a.Allocate(req).handle;
  std::mt19937_64 rng(kSeed);
  std::vector<uint32_t> victims(1 << 16);
  for (uint32_t& v : victims) v = static_cast<uint32_t>(rng() % live.size());
  size_t i = 0;
  for (auto _ : state) {
    const uint32_t victim = victims[i++ & (victims.size() - 1)];
    a.Free(live[victim]);
    live[victim] = a.Allocate(req).handle;
  }
  benchmark::DoNotOptimize(a.GetStats().bytes_in_use);
  state.SetItemsProcessed(state.iterations() * 2);
}
BENCHMARK(BM_FragmentedBin)->ArgName("free_chunks")->Arg(64)->Arg(4096)->Arg(262144);

}  // namespace
}  // namespace hbmsim

BENCHMARK_MAIN();
