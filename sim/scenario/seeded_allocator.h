// A policy started from a recording's start state.
//
// The policy installed the segments held at the trace start (its
// RecordingHooks::seed) and returned where each live block is. The reader
// still emits one `alloc tag=preexisting` per such block, so the replay engine
// knows their ids and later frees apply; this adapter answers those allocs
// with the seeded block instead of allocating again. Everything else goes
// straight to the wrapped policy, and its policy events are passed on.
//
//   engine ──Allocate(id)──▶ SeededAllocator ──seeded id?──▶ the seeded block
//                                  └────────── otherwise ──▶ the policy
#ifndef HBMSIM_SIM_SCENARIO_SEEDED_ALLOCATOR_H_
#define HBMSIM_SIM_SCENARIO_SEEDED_ALLOCATOR_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "sim/config/policy_registry.h"

namespace hbmsim::sim {

class SeededAllocator final : public Allocator, private PolicyObserver {
 public:
  // Becomes `inner`'s observer for good: `inner` must not be used (beyond
  // being destroyed) once this adapter is gone.
  SeededAllocator(Allocator& inner, const std::vector<SeededBlock>& blocks);

  std::string_view name() const override { return inner_.name(); }
  AllocResult Allocate(const AllocRequest& req) override;
  void Free(Handle h) override { inner_.Free(h); }
  void RequestFree(Handle h) override { inner_.RequestFree(h); }
  void CompleteFree(Handle h) override { inner_.CompleteFree(h); }
  bool SupportsPrograms() const override { return inner_.SupportsPrograms(); }
  ProgramResult LoadProgram(ProgramId pid, Bytes bytes, EventIndex event) override {
    return inner_.LoadProgram(pid, bytes, event);
  }
  ProgramResult RunProgram(ProgramId pid, EventIndex event) override { return inner_.RunProgram(pid, event); }
  void UnloadProgram(ProgramId pid) override { inner_.UnloadProgram(pid); }
  AllocatorStats GetStats() const override { return inner_.GetStats(); }
  void ClearStats() override { inner_.ClearStats(); }
  void AppendCounters(Counters& out) const override { inner_.AppendCounters(out); }
  void WalkMemoryMap(MemoryMapVisitor& v) const override { inner_.WalkMemoryMap(v); }
  Bytes ReservedBytes() const override { return inner_.ReservedBytes(); }
  ReservedCause CauseOf(const BlockContext& c) const override { return inner_.CauseOf(c); }
  std::span<const std::string_view> ReservedCauses() const override { return inner_.ReservedCauses(); }
  int64_t BytesInUse() const override { return inner_.BytesInUse(); }
  absl::Status CheckInvariants() const override { return inner_.CheckInvariants(); }

 private:
  void OnPolicyEvent(const PolicyEvent& e) override { Notify(e); }

  Allocator& inner_;
  // id → the seeded block's answer; each is handed out once.
  absl::flat_hash_map<uint64_t, AllocResult> seeded_;
};

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_SCENARIO_SEEDED_ALLOCATOR_H_
