// The TPU runtime, reserved explained by hand: each cause of
// TpuAllocator::CauseOf (allocator/tpu/tpu_inspect.cc). The rules used, from
// allocator/tpu/tpu_allocator.h's model (docs/tpu-model.md):
//   the runtime holds the whole HBM, one region [0, hbm_bytes): reserved is
//   hbm_bytes whatever is live;
//   a buffer is padded to the 512 B granule (here: no shape, no tile), goes
//   best fit (smallest free block, highest address among equals) and takes
//   the block's top end;
//   a program is reserved first fit from the bottom;
//   free neighbours coalesce at once.
// CauseOf: the open space is the free block right above the highest resident
// program (at 0 when none), what the runtime reports as reservable; every
// other free block is a gap.
#include <memory>
#include <vector>

#include "allocator/tpu/tpu_allocator.h"
#include "sim/all_layers.h"
#include "tests/allocator/core/reserved_parts_cases.h"

namespace hbmsim::testing {
namespace {

std::unique_ptr<TpuAllocator> MakeTpu() {
  TpuOptions o;
  o.hbm_bytes = Bytes(10 * kMiB);
  return std::make_unique<TpuAllocator>(o);
}

void LoadProgramOf(TpuAllocator& a, uint64_t id, uint64_t bytes) {
  EXPECT_TRUE(a.LoadProgram(ProgramId(id), Bytes(bytes), EventIndex(id)).ok) << "program " << id;
}

// Buffers from the top: 1 MiB at [9, 10), 1 MiB at [8, 9), 1000 B padded to
// 1024 (padding 24) at [8 MiB − 1024, 8 MiB); a 2 MiB program at [0, 2).
// Freeing the middle buffer leaves [8, 9) between two buffers: a gap; the
// top one's free requested, not completed, is queued. The open space runs
// from the program's end to the lowest buffer: 2 MiB .. 8 MiB − 1024.
// 1000 + 24 + (6 MiB − 1024) + 2 MiB + 1 MiB + 1 MiB = 10 MiB.
std::unique_ptr<Allocator> TpuBuffersAndAProgram() {
  auto a = MakeTpu();
  const AllocResult top = AllocBytes(*a, 1, kMiB);
  const AllocResult middle = AllocBytes(*a, 2, kMiB);
  AllocBytes(*a, 3, 1000);
  LoadProgramOf(*a, 9, 2 * kMiB);
  a->Free(middle.handle);
  a->RequestFree(top.handle);
  return a;
}

// Programs of 1 MiB at [0, 1), [1, 2), [2, 3); unloading the middle one
// leaves a gap between two programs. The open space is above the highest,
// [3, 10): 7 MiB. Nothing is live: no padding part.
std::unique_ptr<Allocator> TpuGapBetweenPrograms() {
  auto a = MakeTpu();
  LoadProgramOf(*a, 1, kMiB);
  LoadProgramOf(*a, 2, kMiB);
  LoadProgramOf(*a, 3, kMiB);
  a->UnloadProgram(ProgramId(2));
  return a;
}

// Unloading the lower of two programs leaves [0, 1) under a resident program:
// a hole only a request that fits reuses, a gap; the open space, what the
// runtime reports reservable, is above the highest: [2, 10), 8 MiB.
std::unique_ptr<Allocator> TpuGapUnderAProgram() {
  auto a = MakeTpu();
  LoadProgramOf(*a, 1, kMiB);
  LoadProgramOf(*a, 2, kMiB);
  a->UnloadProgram(ProgramId(1));
  return a;
}

// Two 1 MiB buffers at [9, 10) and [8, 9); freeing the top one leaves a hole
// above the buffers, not the space programs grow into: a gap. With no
// program the open space is the free block at 0: [0, 8), 8 MiB.
std::unique_ptr<Allocator> TpuGapAboveTheBuffers() {
  auto a = MakeTpu();
  const AllocResult top = AllocBytes(*a, 1, kMiB);
  AllocBytes(*a, 2, kMiB);
  a->Free(top.handle);
  return a;
}

}  // namespace

std::vector<WorkedCase> TpuWorkedCases() {
  return {
      {"PaddingProgramsQueuedFreesGapsAndOpenSpace", "tpu", "queued_free", "", TpuBuffersAndAProgram,
       fmt::format("requested=1000; padding=24/1; open_space={}/1; program_reservation={}/1; gap={}/1; "
                   "queued_free={}/1",
                   6 * kMiB - 1024, 2 * kMiB, kMiB, kMiB)},
      {"GapBetweenPrograms", "tpu", "gap", "", TpuGapBetweenPrograms,
       fmt::format("requested=0; open_space={}/1; program_reservation={}/2; gap={}/1", 7 * kMiB, 2 * kMiB,
                   kMiB)},
      {"GapUnderAProgram", "tpu", "gap", "", TpuGapUnderAProgram,
       fmt::format("requested=0; open_space={}/1; gap={}/1; program_reservation={}/1", 8 * kMiB, kMiB, kMiB)},
      {"GapAboveTheBuffersOpenSpaceAtZero", "tpu", "open_space", "", TpuGapAboveTheBuffers,
       fmt::format("requested={}; padding=0/1; open_space={}/1; gap={}/1", kMiB, 8 * kMiB, kMiB)},
  };
}

}  // namespace hbmsim::testing
