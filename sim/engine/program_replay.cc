// Program events (program_load/run/unload), split from replay_engine.cc: the
// two ways of replaying them depend on whether the policy models programs.
#include <string>

#include "fmt/format.h"
#include "sim/engine/replay_engine.h"

namespace hbmsim::sim {
namespace {

absl::Status BadProgram(const EventReader& reader, const Event& e, std::string_view why) {
  return absl::InvalidArgumentError(
      fmt::format("{}: {} of program {} {}", reader.Location(), EventKindName(e.kind), e.id, why));
}

}  // namespace

void ReplayEngine::NotifyProgramPlaced(EventIndex index, Offset offset, Bytes size) {
  for (ReplayObserver* o : observers_) o->OnProgramPlaced(index, offset, size);
}

// The policy models resident executables (e.g. TPU): hand it the events.
absl::Status ReplayEngine::ApplyProgram(const Event& e, EventIndex index, const EventReader& reader) {
  auto it = programs_.find(e.id);
  if (e.kind == EventKind::kProgramLoad) {
    if (it != programs_.end()) return BadProgram(reader, e, "that is already loaded");
    const ProgramResult r = allocator_.LoadProgram(e.program(), e.bytes, index);
    programs_.emplace(e.id, Live{kNullHandle, e.bytes, r.ok, false});
    AddLive(e.bytes, index);
    if (r.ok) NotifyProgramPlaced(index, r.offset, r.size);
    if (!r.ok) {
      ReportFailure({index, e.kind, e.id, e.bytes, e.bytes, ClassifyFailure(e.bytes, r.free_bytes),
                     r.free_bytes, r.reservable_bytes});
    }
    return absl::OkStatus();
  }
  if (it == programs_.end()) return BadProgram(reader, e, "that is not loaded");
  if (!it->second.placed) {
    ++summary_.ignored_frees;  // its load failed: nothing to run or unload
    if (e.kind == EventKind::kProgramUnload) {
      RemoveLive(it->second.requested);
      programs_.erase(it);
    }
    return absl::OkStatus();
  }
  if (e.kind == EventKind::kProgramUnload) {
    allocator_.UnloadProgram(e.program());
    RemoveLive(it->second.requested);
    programs_.erase(it);
    return absl::OkStatus();
  }
  const ProgramResult r = allocator_.RunProgram(e.program(), index);
  if (r.ok) return absl::OkStatus();
  const Bytes bytes = it->second.requested;
  ReportFailure({index, e.kind, e.id, bytes, bytes, ClassifyFailure(bytes, r.free_bytes), r.free_bytes,
                 r.reservable_bytes});
  return absl::OkStatus();
}

// No program model: a program is a buffer of its own id space, loaded by an
// alloc and unloaded by a free; running it touches no memory.
absl::Status ReplayEngine::ApplyProgramAsBuffer(const Event& e, EventIndex index,
                                                        const EventReader& reader) {
  auto it = programs_.find(e.id);
  if (e.kind == EventKind::kProgramLoad) {
    if (it != programs_.end()) return BadProgram(reader, e, "that is already loaded");
    AllocRequest req;
    req.id = BufferId(e.id);
    req.bytes = e.bytes;
    req.stream = e.stream;
    req.event = index;
    const AllocResult r = allocator_.Allocate(req);
    programs_.emplace(e.id, Live{r.ok() ? r.handle : kNullHandle, e.bytes, r.ok(), false});
    AddLive(e.bytes, index);
    if (r.ok() && r.has_offset) NotifyProgramPlaced(index, r.offset, r.size);
    if (!r.ok()) {
      ReportFailure({index, e.kind, e.id, e.bytes, r.rounded, r.status, r.free_bytes, r.largest_free_block});
    }
    return absl::OkStatus();
  }
  if (it == programs_.end()) return BadProgram(reader, e, "that is not loaded");
  if (e.kind == EventKind::kProgramRun) return absl::OkStatus();
  if (it->second.placed) {
    allocator_.Free(it->second.handle);
  } else {
    ++summary_.ignored_frees;
  }
  RemoveLive(it->second.requested);
  programs_.erase(it);
  return absl::OkStatus();
}

}  // namespace hbmsim::sim
