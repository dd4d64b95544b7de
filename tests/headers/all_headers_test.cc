// Compiles every project header together (see CMakeLists.txt), then checks the
// one block-state vocabulary those headers now share.
#include "all_headers.h"  // IWYU pragma: keep

#include "gtest/gtest.h"
#include "sim/all_layers.h"

namespace hbmsim {
namespace {

TEST(AllHeadersTest, OneBlockStateWithHbmsimAndPyTorchNames) {
  EXPECT_EQ(BlockStateName(BlockState::kFree), "free");
  EXPECT_EQ(BlockStateName(BlockState::kInUse), "in_use");
  EXPECT_EQ(BlockStateName(BlockState::kPendingFree), "pending_free");
  EXPECT_EQ(BlockStateName(BlockState::kProgram), "program");
  EXPECT_EQ(BlockStateName(BlockState::kUnmapped), "unmapped");
  EXPECT_EQ(TorchBlockStateName(BlockState::kFree), "inactive");
  EXPECT_EQ(TorchBlockStateName(BlockState::kInUse), "active_allocated");
  EXPECT_EQ(TorchBlockStateName(BlockState::kPendingFree), "active_pending_free");
  EXPECT_EQ(TorchBlockStateName(BlockState::kProgram), "active_allocated");
  EXPECT_EQ(TorchBlockStateName(BlockState::kUnmapped), "inactive");
}

// A snapshot block and a seeded block carry the same type as a memory-map block.
TEST(AllHeadersTest, SnapshotAndSeedBlocksUseTheSameBlockState) {
  static_assert(std::is_same_v<decltype(SnapshotBlock::state), BlockState>);
  static_assert(std::is_same_v<decltype(allocator::torch::SeedBlock::state), BlockState>);
  static_assert(std::is_same_v<decltype(BlockInfo::state), BlockState>);
  EXPECT_EQ(SnapshotBlock{}.state, BlockState::kFree);
}

}  // namespace
}  // namespace hbmsim
