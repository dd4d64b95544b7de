#include "sim/whatif/trial.h"

#include <algorithm>
#include <vector>

#include "allocator/baselines/offline_allocator.h"

namespace hbmsim {
namespace {

struct LiveSlot {
  Handle handle = kNullHandle;
  uint64_t size = 0;
  bool placed = false;
};

class Trial {
 public:
  Trial(const CompactTrace& trace, Allocator& a, const TrialOptions& o)
      : trace_(trace), a_(a), options_(o), buffers_(trace.buffer_slots), programs_(trace.program_slots) {}

  TrialResult Run() {
    const bool programs = a_.SupportsPrograms();
    for (uint64_t pos = 0; pos < trace_.events.size(); ++pos) {
      const PackedEvent& p = trace_.events[pos];
      bool failed;
      if (!IsProgramEvent(p.kind)) {
        failed = ApplyBuffer(p, buffers_, pos);
      } else if (programs) {
        failed = ApplyProgram(p);
      } else {
        failed = p.kind != EventKind::kProgramRun && ApplyBuffer(p, programs_, pos);
      }
      if (options_.probe_position == pos) result_.probe_stats = a_.GetStats();
      if (failed && options_.stop_at_first_failure) break;
      if (options_.end_position == pos) break;
    }
    result_.final_stats = a_.GetStats();
    return result_;
  }

 private:
  bool ApplyBuffer(const PackedEvent& p, std::vector<LiveSlot>& slots, uint64_t pos) {
    LiveSlot& live = slots[p.slot];
    if (p.kind == EventKind::kAlloc || p.kind == EventKind::kProgramLoad) {
      AllocRequest req;
      req.id = BufferId(p.id);
      req.bytes = Bytes(p.bytes);
      req.stream = StreamId(p.stream);
      req.shape = p.shape == kNoShape ? nullptr : &trace_.shapes[p.shape];
      req.event = EventIndex(p.index);
      const AllocResult r = a_.Allocate(req);
      live = {r.ok() ? r.handle : kNullHandle, r.ok() ? r.size.value() : 0, r.ok()};
      if (!r.ok()) return Fail({p.index, r.rounded, r.status, r.free_bytes, r.largest_free_block});
      in_use_ += live.size;
      if (in_use_ > peak_in_use_) {
        peak_in_use_ = in_use_;
        result_.peak_in_use_position = pos;
      }
      return false;
    }
    if (!live.placed) return false;  // its alloc failed: the engine ignores the free
    if (p.kind == EventKind::kFreeRequested) {
      a_.RequestFree(live.handle);
      return false;
    }
    if (p.kind == EventKind::kFreeCompleted) {
      a_.CompleteFree(live.handle);
    } else {
      a_.Free(live.handle);
    }
    in_use_ -= live.size;
    live = {};
    return false;
  }

  bool ApplyProgram(const PackedEvent& p) {
    LiveSlot& live = programs_[p.slot];
    const Bytes bytes(p.bytes);
    if (p.kind == EventKind::kProgramLoad) {
      const ProgramResult r = a_.LoadProgram(ProgramId(p.id), bytes, EventIndex(p.index));
      live = {kNullHandle, p.bytes, r.ok};
      if (r.ok) return false;
      return Fail({p.index, bytes, ClassifyFailure(bytes, r.free_bytes), r.free_bytes, r.reservable_bytes});
    }
    if (!live.placed) return false;
    if (p.kind == EventKind::kProgramUnload) {
      a_.UnloadProgram(ProgramId(p.id));
      live = {};
      return false;
    }
    const ProgramResult r = a_.RunProgram(ProgramId(p.id), EventIndex(p.index));
    if (r.ok) return false;
    const Bytes loaded(live.size);
    return Fail({p.index, loaded, ClassifyFailure(loaded, r.free_bytes), r.free_bytes, r.reservable_bytes});
  }

  bool Fail(const TrialFailure& f) {
    ++result_.failures;
    (f.kind == AllocStatus::kOom ? result_.oom : result_.fragmentation)++;
    if (!result_.first_failure) result_.first_failure = f;
    return true;
  }

  const CompactTrace& trace_;
  Allocator& a_;
  const TrialOptions& options_;
  std::vector<LiveSlot> buffers_, programs_;
  uint64_t in_use_ = 0;
  uint64_t peak_in_use_ = 0;
  TrialResult result_;
};

}  // namespace

AllocatorMaker MakeAllocatorMaker(const AllocatorConfig& config, const CompactTrace& trace) {
  if (config.policy->name == "offline") {
    const absl::StatusOr<Bytes> alignment = config.options.Get<Bytes>("alignment");
    if (!alignment.ok()) {
      return [status = alignment.status()](Bytes) -> absl::StatusOr<std::unique_ptr<Allocator>> {
        return status;
      };
    }
    auto plan =
        std::make_shared<const OfflinePlan>(PlanOffline(CompactBufferIntervals(trace), alignment->value()));
    return [plan](Bytes limit) -> absl::StatusOr<std::unique_ptr<Allocator>> {
      return std::make_unique<OfflineAllocator>(plan, limit);
    };
  }
  return [config](Bytes limit) { return BuildAllocator(config, limit); };
}

absl::StatusOr<TrialResult> RunTrial(const CompactTrace& trace, const AllocatorMaker& maker, Bytes limit,
                                     const TrialOptions& options) {
  absl::StatusOr<std::unique_ptr<Allocator>> a = maker(limit);
  if (!a.ok()) return a.status();
  return Trial(trace, **a, options).Run();
}

}  // namespace hbmsim
