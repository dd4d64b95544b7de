// Random programs (several streams, queued frees) under every option family,
// with the invariants checked after every op, and run-to-run determinism.
#include <string>
#include <vector>

#include "allocator/torch/torch_allocator.h"
#include "gtest/gtest.h"
#include "tests/allocator/torch/torch_test_util.h"
#include "tests/common/random_ops.h"

namespace hbmsim::allocator::torch {
namespace {

using testing::kMiB;

struct Variant {
  std::string name;
  TorchOptions options;
};

std::vector<Variant> Variants() {
  std::vector<Variant> v;
  TorchOptions base;
  base.capacity = Bytes(768 * kMiB);
  v.push_back({"default", base});
  TorchOptions split = base;
  split.max_split_size = Bytes(24 * kMiB);
  split.max_non_split_rounding = Bytes(30 * kMiB);
  v.push_back({"max_split_size", split});
  TorchOptions roundup = base;
  roundup.roundup_power2_divisions.fill(4);
  roundup.roundup_power2_divisions[0] = 2;
  v.push_back({"roundup", roundup});
  TorchOptions gc = base;
  gc.per_process_memory_fraction = 0.8;
  gc.garbage_collection_threshold = 0.6;
  v.push_back({"gc_fraction", gc});
  TorchOptions expandable = base;
  expandable.expandable_segments = true;
  v.push_back({"expandable", expandable});
  TorchOptions fixed = split;
  fixed.fixed_retry_search = true;
  v.push_back({"fixed_retry", fixed});
  return v;
}

::hbmsim::testing::ProgramShape Shape() {
  ::hbmsim::testing::ProgramShape shape;
  shape.num_ops = 1500;
  shape.max_bytes = 96 * kMiB;
  shape.num_streams = 3;
  shape.queued_free_fraction = 0.3;
  return shape;
}

TEST(TorchProperty, InvariantsHoldAfterEveryOpForEveryVariant) {
  for (const Variant& variant : Variants()) {
    int total_failures = 0;
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      const auto ops = ::hbmsim::testing::GenerateProgram(seed, Shape());
      TorchAllocator a(variant.options);
      const auto outcome = ::hbmsim::testing::RunProgram(a, ops, /*paranoid=*/true);
      ASSERT_TRUE(outcome.invariants.ok()) << variant.name << " seed " << seed << ": " << outcome.invariants;
      total_failures += outcome.failures;
    }
    // The capacity is tight enough that every variant meets the failure ladder.
    EXPECT_GT(total_failures, 0) << variant.name;
  }
}

TEST(TorchProperty, RunsAreDeterministic) {
  for (const Variant& variant : Variants()) {
    const auto ops = ::hbmsim::testing::GenerateProgram(42, Shape());
    TorchAllocator first(variant.options);
    TorchAllocator second(variant.options);
    const auto a = ::hbmsim::testing::RunProgram(first, ops, /*paranoid=*/false);
    const auto b = ::hbmsim::testing::RunProgram(second, ops, /*paranoid=*/false);
    EXPECT_EQ(a.digest, b.digest) << variant.name;
    EXPECT_EQ(first.torch_stats(), second.torch_stats()) << variant.name;
  }
}

// Freeing everything and flushing returns every byte to the device.
TEST(TorchProperty, FlushAfterFreeingEverythingReleasesAllMemory) {
  for (const Variant& variant : Variants()) {
    auto ops = ::hbmsim::testing::GenerateProgram(7, Shape());
    std::vector<bool> live(ops.size() + 2, false);
    for (const auto& op : ops) {
      if (op.kind == ::hbmsim::testing::OpKind::kAlloc) live[op.id] = true;
      if (op.kind == ::hbmsim::testing::OpKind::kFree ||
          op.kind == ::hbmsim::testing::OpKind::kCompleteFree) {
        live[op.id] = false;
      }
    }
    for (uint64_t id = 0; id < live.size(); ++id) {
      if (live[id]) ops.push_back({::hbmsim::testing::OpKind::kFree, id, 0, 0});
    }
    TorchAllocator a(variant.options);
    ASSERT_TRUE(::hbmsim::testing::RunProgram(a, ops, /*paranoid=*/false).invariants.ok());
    a.EmptyCache();
    EXPECT_EQ(a.torch_stats().reserved_bytes.all().current, 0) << variant.name;
    EXPECT_EQ(a.torch_stats().active.all().current, 0) << variant.name;
    EXPECT_TRUE(a.CheckInvariants().ok()) << variant.name;
  }
}

// A seeded start (small, split large, expandable segments with live and pending
// blocks) under the same random programs.
TEST(TorchProperty, SeededStartsKeepTheInvariants) {
  const uint64_t base = 1ull << 44;
  std::vector<SegmentSeed> seeds(3);
  seeds[0] = {Offset(base),
              Bytes(2 * kMiB),
              StreamId(0),
              false,
              std::nullopt,
              {{Bytes(4096), Bytes(4000), BlockState::kInUse, BufferId(1)},
               {Bytes(2 * kMiB - 4096), Bytes(), BlockState::kFree, BufferId()}}};
  seeds[1] = {Offset(base + 64 * kMiB),
              Bytes(20 * kMiB),
              StreamId(1),
              false,
              std::nullopt,
              {{Bytes(6 * kMiB), Bytes(), BlockState::kFree, BufferId()},
               {Bytes(4 * kMiB), Bytes(4 * kMiB), BlockState::kPendingFree, BufferId(2)},
               {Bytes(10 * kMiB), Bytes(), BlockState::kFree, BufferId()}}};
  seeds[2] = {Offset(base + 128 * kMiB),
              Bytes(40 * kMiB),
              StreamId(2),
              true,
              std::nullopt,
              {{Bytes(30 * kMiB), Bytes(30 * kMiB), BlockState::kInUse, BufferId(3)},
               {Bytes(10 * kMiB), Bytes(), BlockState::kFree, BufferId()}}};
  for (const Variant& variant : Variants()) {
    for (uint64_t seed = 11; seed <= 13; ++seed) {
      TorchAllocator a(variant.options);
      for (const SegmentSeed& s : seeds) ASSERT_TRUE(a.SeedSegment(s).ok());
      const auto ops = ::hbmsim::testing::GenerateProgram(seed, Shape());
      const auto outcome = ::hbmsim::testing::RunProgram(a, ops, /*paranoid=*/true);
      ASSERT_TRUE(outcome.invariants.ok()) << variant.name << " seed " << seed << ": " << outcome.invariants;
    }
  }
}

}  // namespace
}  // namespace hbmsim::allocator::torch
