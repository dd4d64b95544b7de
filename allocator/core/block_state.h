// The state of one block of device memory, the one enum every layer uses: the
// memory-map walk (memory_map.h), a PyTorch snapshot's blocks as read
// (trace/torch/snapshot.h: only kFree, kInUse, kPendingFree occur there) and
// the blocks a policy is seeded with (allocator/torch). One meaning, one type,
// so any two headers can be included together.
//
//   PyTorch snapshot      hbmsim
//   "inactive"            kFree
//   "active_allocated"    kInUse (kProgram: a TPU program's reservation)
//   "active_pending_free" kPendingFree
#ifndef HBMSIM_ALLOCATOR_CORE_BLOCK_STATE_H_
#define HBMSIM_ALLOCATOR_CORE_BLOCK_STATE_H_

#include <cstdint>
#include <string_view>

namespace hbmsim::allocator {

enum class BlockState : uint8_t {
  kFree,         // reusable now
  kInUse,        // held by a live buffer
  kPendingFree,  // released by the caller, queued deallocation not complete
  kProgram,      // a resident program's reservation
  kUnmapped,     // address space with no physical memory behind it
};

// hbmsim's name: "free", "in_use", "pending_free", "program", "unmapped".
std::string_view BlockStateName(BlockState s);

// The name a PyTorch snapshot gives a block in this state: "inactive",
// "active_allocated", "active_pending_free" (a program's reservation is
// active_allocated; unmapped space is inactive).
std::string_view TorchBlockStateName(BlockState s);

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_CORE_BLOCK_STATE_H_
