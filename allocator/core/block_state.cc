#include "allocator/core/block_state.h"

namespace hbmsim::allocator {

std::string_view BlockStateName(BlockState s) {
  switch (s) {
    case BlockState::kFree:
      return "free";
    case BlockState::kInUse:
      return "in_use";
    case BlockState::kPendingFree:
      return "pending_free";
    case BlockState::kProgram:
      return "program";
    case BlockState::kUnmapped:
      return "unmapped";
  }
  return "?";
}

std::string_view TorchBlockStateName(BlockState s) {
  switch (s) {
    case BlockState::kInUse:
    case BlockState::kProgram:
      return "active_allocated";
    case BlockState::kPendingFree:
      return "active_pending_free";
    case BlockState::kFree:
    case BlockState::kUnmapped:
      return "inactive";
  }
  return "?";
}

}  // namespace hbmsim::allocator
