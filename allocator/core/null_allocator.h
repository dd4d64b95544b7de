// The `null` allocator: hands out fresh addresses in request order, never
// refuses, never searches, frees nothing. Not a policy a user picks (it is
// in no registry): it is the floor of what a replay costs with no placement
// at all (bench/replay), and the survey's policy (sim/whatif/trial.cc), which
// needs only what the engine counts itself (live bytes and their peak).
#ifndef HBMSIM_ALLOCATOR_CORE_NULL_ALLOCATOR_H_
#define HBMSIM_ALLOCATOR_CORE_NULL_ALLOCATOR_H_

#include <cstdint>
#include <string_view>

#include "allocator/core/allocator.h"

namespace hbmsim::allocator {

class NullAllocator final : public Allocator {
 public:
  std::string_view name() const override { return "null"; }
  AllocResult Allocate(const AllocRequest& req) override {
    AllocResult r;
    r.handle = Handle(req.id.value());
    r.has_offset = true;
    r.offset = Offset(next_);
    r.size = r.rounded = req.bytes;
    // Wraps past 2^64 on purpose: these addresses are a cost, not a place
    // (nothing is ever looked up by them), and the survey must take the
    // requests of 2^64 - 1 bytes a corrupted or adversarial trace asks for.
    next_ += req.bytes.value();
    ++allocs_;
    return r;
  }
  void Free(Handle) override {}
  void ClearStats() override {}  // it keeps no stats to clear
  AllocatorStats GetStats() const override {
    AllocatorStats s;
    s.num_allocs = static_cast<int64_t>(allocs_);
    return s;
  }
  void WalkMemoryMap(MemoryMapVisitor&) const override {}
  absl::Status CheckInvariants() const override { return absl::OkStatus(); }

 private:
  uint64_t next_ = 0;
  uint64_t allocs_ = 0;
};

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_CORE_NULL_ALLOCATOR_H_
