// The torch policy started from a snapshot's rebuilt initial state.
//
// The segments held at the trace start are installed with
// TorchAllocator::SeedSegment; the blocks live in them come back as handles.
// The snapshot reader (trace/torch/snapshot_events.h) still emits one
// `alloc tag=preexisting` per such block, so the replay engine knows their
// ids and later frees apply; this adapter answers those allocs with the
// seeded block instead of allocating again. Everything else goes straight to
// the wrapped policy, and its policy events are passed on unchanged.
//
//   engine ──Allocate(id)──▶ SeededTorch ──seeded id?──▶ the seeded block
//                                 └──────── otherwise ──▶ TorchAllocator
#ifndef HBMSIM_SIM_TORCH_REPLAY_SEEDED_TORCH_H_
#define HBMSIM_SIM_TORCH_REPLAY_SEEDED_TORCH_H_

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "allocator/torch/torch_allocator.h"
#include "trace/torch/snapshot_events.h"

namespace hbmsim {

class SeededTorch final : public Allocator, private PolicyObserver {
 public:
  // Becomes `inner`'s observer for good: `inner` must not be used (beyond
  // being destroyed) once this adapter is gone.
  explicit SeededTorch(torch::TorchAllocator& inner);

  // Seeds every segment of `reader.StartSegments(device_index)`. Errors name
  // the segment (a state the policy rejects, e.g. two adjacent free blocks).
  absl::Status Seed(const SnapshotEventReader& reader, size_t device_index);
  uint64_t seeded_segments() const { return seeded_segments_; }
  uint64_t seeded_blocks() const { return seeded_blocks_; }

  std::string_view name() const override { return inner_.name(); }
  AllocResult Allocate(const AllocRequest& req) override;
  void Free(Handle h) override { inner_.Free(h); }
  void RequestFree(Handle h) override { inner_.RequestFree(h); }
  void CompleteFree(Handle h) override { inner_.CompleteFree(h); }
  AllocatorStats GetStats() const override { return inner_.GetStats(); }
  void AppendCounters(Counters& out) const override { inner_.AppendCounters(out); }
  void WalkMemoryMap(MemoryMapVisitor& v) const override { inner_.WalkMemoryMap(v); }
  absl::Status CheckInvariants() const override { return inner_.CheckInvariants(); }

 private:
  void OnPolicyEvent(const PolicyEvent& e) override { Notify(e); }

  torch::TorchAllocator& inner_;
  // id → the seeded block's answer; each is handed out once.
  absl::flat_hash_map<uint64_t, AllocResult> seeded_;
  uint64_t seeded_segments_ = 0;
  uint64_t seeded_blocks_ = 0;
};

}  // namespace hbmsim

#endif  // HBMSIM_SIM_TORCH_REPLAY_SEEDED_TORCH_H_
