// Replay speed of the torch policy alone (no reader, no engine): the real
// traces of tests/data/torch, parsed once, replayed from their seeded start.
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "allocator/torch/torch_allocator.h"
#include "benchmark/benchmark.h"

namespace hbmsim::allocator::torch {
namespace {

enum class Action : uint8_t { kAlloc, kFreeRequested, kFreeCompleted, kOther };

struct Event {
  Action action;
  uint64_t addr, size, stream;
};

struct Workload {
  std::vector<SegmentSeed> seeds;
  std::vector<std::vector<uint64_t>> live;  // addresses of each seed's live blocks
  std::vector<Event> events;
};

Workload Load(const std::string& name) {
  std::ifstream in(std::string(HBMSIM_SOURCE_DIR) + "/tests/data/torch/" + name);
  Workload w;
  uint64_t cursor = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    std::string word;
    f >> word;
    if (word == "segment") {
      uint64_t base, size, stream;
      int small, expandable;
      f >> base >> size >> stream >> small >> expandable;
      w.seeds.push_back({Offset(base), Bytes(size), StreamId(stream), expandable != 0, small != 0, {}});
      w.live.emplace_back();
      cursor = base;
    } else if (word == "block") {
      uint64_t size, requested;
      std::string state;
      f >> size >> requested >> state;
      const bool free = state == "free";
      w.seeds.back().blocks.push_back({Bytes(size), Bytes(requested),
                                       free ? BlockState::kFree : BlockState::kInUse,
                                       BufferId()});
      if (!free) w.live.back().push_back(cursor);
      cursor += size;
    } else {
      Event e{Action::kOther, 0, 0, 0};
      f >> e.addr >> e.size >> e.stream;
      if (word == "alloc") e.action = Action::kAlloc;
      if (word == "free_requested") e.action = Action::kFreeRequested;
      if (word == "free_completed") e.action = Action::kFreeCompleted;
      w.events.push_back(e);
    }
  }
  return w;
}

void ReplayWorkload(benchmark::State& state, const char* fixture) {
  const Workload w = Load(fixture);
  for (auto _ : state) {
    TorchAllocator a({});
    std::map<uint64_t, Handle> live;
    for (size_t i = 0; i < w.seeds.size(); ++i) {
      auto handles = a.SeedSegment(w.seeds[i]);
      for (size_t k = 0; k < handles->size(); ++k) live[w.live[i][k]] = (*handles)[k];
    }
    for (const Event& e : w.events) {
      if (e.action == Action::kAlloc) {
        AllocRequest req;
        req.bytes = Bytes(e.size);
        req.stream = StreamId(e.stream);
        req.recorded_address = Offset(e.addr);
        live[e.addr] = a.Allocate(req).handle;
      } else if (e.action == Action::kFreeRequested) {
        a.RequestFree(live[e.addr]);
      } else if (e.action == Action::kFreeCompleted) {
        a.CompleteFree(live[e.addr]);
      }
    }
    benchmark::DoNotOptimize(a.torch_stats());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(w.events.size()));
}

BENCHMARK_CAPTURE(ReplayWorkload, gen5_user_metadata, "gen5_user_metadata_compile_context.txt")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(ReplayWorkload, cs336_ctx256_burst, "cs336_ctx256_forward_segment_free_burst.txt")
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hbmsim::allocator::torch

BENCHMARK_MAIN();
