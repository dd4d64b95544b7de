// --check-recorded for a TF/JAX profile: the policy's answers against what
// the recorded BFC allocator reported after the same allocation or free.
//
//   engine ──Allocate/Free──▶ RecordedChecker ──▶ the policy (bfc)
//                                   │ after each call of a recorded event:
//                                   ▼ compare with the record (profile_trace.h)
//
// Measures, each counted over the records of the replayed device that carry
// the recorded figure (start-state events are not records and never count):
//   address           simulated offset == recorded addr          (allocations)
//   chunk_size        simulated block size == allocation_bytes   (allocations
//                     and deallocations: the size of the chunk freed)
//   bytes_in_use      stats.bytes_in_use == bytes_allocated
//   fragmentation     (free_pool − largest free block) / free_pool, free_pool =
//                     pool − bytes_in_use, printed with 6 significant digits as
//                     TF's TraceMe does, == the recorded text (0 when nothing is free)
//   peak_bytes_in_use max(the recorded peak when the recording began, every
//                     bytes_in_use seen since) == peak_bytes_in_use
// The first mismatch of each measure is kept with its event and record.
//
// Becomes the inner policy's observer (and forwards its events), as
// SeededTorch does; the inner policy must outlive this adapter.
#ifndef HBMSIM_SIM_XPLANE_REPLAY_RECORDED_CHECKER_H_
#define HBMSIM_SIM_XPLANE_REPLAY_RECORDED_CHECKER_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "allocator/core/allocator.h"
#include "trace/xplane/profile_trace.h"

namespace hbmsim {

enum class RecordedMeasure : uint8_t { kAddress, kChunkSize, kBytesInUse, kFragmentation, kPeak };
inline constexpr int kNumRecordedMeasures = 5;
std::string_view RecordedMeasureName(RecordedMeasure m);  // "address", "chunk_size", ...

struct MeasureCount {
  uint64_t matched = 0;
  uint64_t total = 0;
  std::optional<std::string>
      first_mismatch;  // "event 12 (planes[1] ... events[3]): recorded 256, simulated 512"
};

class RecordedChecker final : public Allocator, private PolicyObserver {
 public:
  RecordedChecker(Allocator& inner, const xplane::ProfileTrace& trace, uint32_t device);

  std::string_view name() const override { return inner_.name(); }
  AllocResult Allocate(const AllocRequest& req) override;
  void Free(Handle h) override;
  void RequestFree(Handle h) override { inner_.RequestFree(h); }
  void CompleteFree(Handle h) override { Free(h); }
  AllocatorStats GetStats() const override { return inner_.GetStats(); }
  void AppendCounters(Counters& out) const override { inner_.AppendCounters(out); }
  void WalkMemoryMap(MemoryMapVisitor& v) const override { inner_.WalkMemoryMap(v); }
  absl::Status CheckInvariants() const override { return inner_.CheckInvariants(); }

  const MeasureCount& count(RecordedMeasure m) const { return counts_[static_cast<int>(m)]; }
  // Fragmentation as TF computes it, from the inner policy's memory map.
  double Fragmentation() const;

 private:
  void OnPolicyEvent(const PolicyEvent& e) override { Notify(e); }
  void CheckAfter(const xplane::MemoryRecord& r, uint64_t event, std::optional<uint64_t> offset,
                  std::optional<uint64_t> chunk);
  void Count(RecordedMeasure m, bool ok, uint64_t event, const xplane::MemoryRecord& r, std::string recorded,
             std::string simulated);

  Allocator& inner_;
  const xplane::ProfileTrace& trace_;
  uint32_t device_;
  absl::flat_hash_map<uint64_t, uint64_t> event_of_record_;  // record index -> event index
  absl::flat_hash_map<uint64_t, int32_t> free_record_of_buffer_;
  absl::flat_hash_map<uint64_t, std::pair<uint64_t, uint64_t>> live_;  // handle -> (buffer id, block size)
  std::array<MeasureCount, kNumRecordedMeasures> counts_;
  int64_t peak_ = 0;
};

}  // namespace hbmsim

#endif  // HBMSIM_SIM_XPLANE_REPLAY_RECORDED_CHECKER_H_
