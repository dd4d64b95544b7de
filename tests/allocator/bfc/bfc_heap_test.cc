// Steady state makes no heap allocation: once the chunk records and the bin
// node pool have reached the peak a workload needs, replaying the workload
// again allocates nothing. Counted by tests/common/heap_counter, which
// replaces operator new for this test binary.
#include <cstdlib>
#include <new>
#include <random>

#include "sim/all_layers.h"
#include "tests/allocator/bfc/bfc_test_util.h"
#include "tests/common/heap_counter.h"

namespace hbmsim::testing {
namespace {

// One phase: 2000 buffers allocated and freed in a seeded interleaving, so
// the allocator ends every phase with all memory free.
struct PhaseOp {
  bool alloc;
  uint32_t slot;
  uint64_t bytes;
};

std::vector<PhaseOp> MakePhase() {
  std::mt19937_64 rng(5);
  std::vector<PhaseOp> ops;
  std::vector<uint32_t> live;
  uint32_t next = 0;
  while (next < 2000 || !live.empty()) {
    if (next < 2000 && (live.empty() || rng() % 3 != 0)) {
      const uint64_t bytes = uint64_t{256} << (rng() % 17);  // 256 B .. 16 MiB
      ops.push_back({true, next, bytes + rng() % bytes});
      live.push_back(next++);
    } else {
      const size_t i = rng() % live.size();
      ops.push_back({false, live[i], 0});
      live[i] = live.back();
      live.pop_back();
    }
  }
  return ops;
}

void RunPhase(BfcAllocator& a, const std::vector<PhaseOp>& ops, std::vector<Handle>& handles) {
  for (const PhaseOp& op : ops) {
    if (op.alloc) {
      handles[op.slot] = Alloc(a, op.slot, op.bytes).handle;
    } else {
      a.Free(handles[op.slot]);
    }
  }
}

TEST(BfcHeapTest, RepeatingAWorkloadAllocatesNothing) {
  for (bool growth : {false, true}) {
    BfcOptions o = Limit(uint64_t{64} << 30);
    o.allow_growth = growth;
    BfcAllocator a(o);
    const std::vector<PhaseOp> ops = MakePhase();
    std::vector<Handle> handles(2000);
    RunPhase(a, ops, handles);  // warm-up: records, node slabs and regions reach their peak
    const uint64_t records = a.chunk_records();
    const uint64_t before = HeapAllocationCount();
    RunPhase(a, ops, handles);
    RunPhase(a, ops, handles);
    EXPECT_EQ(HeapAllocationCount() - before, 0u) << "growth=" << growth;
    EXPECT_EQ(a.chunk_records(), records);
    EXPECT_EQ(a.GetStats().bytes_in_use, 0);
    EXPECT_EQ(a.GetStats().num_allocs, 3 * 2000);
    EXPECT_INVARIANTS(a);
  }
}

}  // namespace
}  // namespace hbmsim::testing
