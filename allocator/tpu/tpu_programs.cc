// The program side of the `tpu` policy: reservations at the bottom of HBM,
// reloads on program_run, and eviction.
#include <algorithm>

#include "allocator/tpu/tpu_allocator.h"

namespace hbmsim::allocator {
namespace {

ProgramResult Loaded(const auto& program) {
  ProgramResult r;
  r.offset = program.offset;
  r.size = program.size;
  return r;
}

}  // namespace

ProgramResult TpuAllocator::LoadProgram(ProgramId pid, Bytes bytes, EventIndex event) {
  // Loading a program that is already known replaces it (a recompilation).
  if (programs_.contains(pid)) UnloadProgram(pid);
  Program& p = programs_[pid];
  // A reservation is at least one granule: an empty block could not be mapped.
  p.size = std::max(bytes, options_.granule).RoundUp(options_.granule.value());
  p.last_use = ++clock_;
  return PlaceProgram(pid, p, event, /*reload=*/false);
}

ProgramResult TpuAllocator::RunProgram(ProgramId pid, EventIndex event) {
  auto it = programs_.find(pid);
  if (it == programs_.end()) {
    // Readers reject a run of an unknown program; report it as a failed load
    // of nothing rather than inventing a reservation.
    return ProgramFailure(pid, Program{}, event);
  }
  Program& p = it->second;
  p.last_use = ++clock_;
  last_run_ = pid;  // from now on never an eviction victim
  if (p.resident) return Loaded(p);
  return PlaceProgram(pid, p, event, /*reload=*/true);
}

void TpuAllocator::UnloadProgram(ProgramId pid) {
  auto it = programs_.find(pid);
  if (it == programs_.end()) return;
  if (it->second.resident) {
    layout_.Release(it->second.block);
    resident_.erase(it->second.offset.value());
    reserved_ -= it->second.size;
  }
  programs_.erase(it);
  if (last_run_ == pid) last_run_.reset();
}

ProgramResult TpuAllocator::PlaceProgram(ProgramId pid, Program& p, EventIndex event, bool reload) {
  std::optional<HbmLayout::Ref> at = layout_.PlaceFirstFitBottom(p.size, BlockState::kProgram, pid.value());
  // Programs may evict other programs, never buffers (buffers are privileged).
  while (!at && options_.evict_programs) {
    const std::optional<ProgramId> victim = NextEvictionVictim(pid);
    if (!victim) break;
    Evict(*victim);
    at = layout_.PlaceFirstFitBottom(p.size, BlockState::kProgram, pid.value());
  }
  if (!at) return ProgramFailure(pid, p, event);
  p.resident = true;
  p.block = *at;
  p.offset = Offset(layout_.block(*at).offset);
  resident_[p.offset.value()] = pid;
  reserved_ += p.size;
  peak_reserved_ = std::max(peak_reserved_, reserved_);
  if (reload) {
    ++counters_.programs_reloaded;
    Notify({PolicyEventKind::kProgramReloaded, p.size, p.offset, pid.value()});
  }
  return Loaded(p);
}

ProgramResult TpuAllocator::ProgramFailure(ProgramId pid, const Program& p, EventIndex event) {
  ++counters_.program_load_failures;
  RecordSnapshot(event, /*program_load=*/true, pid.value(), p.size);
  ProgramResult r;
  r.ok = false;
  r.size = p.size;
  r.free_bytes = FreeAfterLadder();
  r.reserved_bytes = reserved_;
  r.reservable_bytes = ReservableLimit();
  return r;
}

bool TpuAllocator::IsEvictable(ProgramId pid) const {
  auto it = programs_.find(pid);
  return it != programs_.end() && it->second.resident && last_run_ != pid;
}

std::optional<ProgramId> TpuAllocator::NextEvictionVictim(std::optional<ProgramId> keep) const {
  std::optional<ProgramId> best;
  const Program* best_program = nullptr;
  for (const auto& [pid, p] : programs_) {
    if (!p.resident || last_run_ == pid || keep == pid) continue;
    bool better = best_program == nullptr;
    if (!better && options_.eviction_order == EvictionOrder::kLargestFirst && p.size != best_program->size) {
      better = p.size > best_program->size;
    } else if (!better) {
      better = p.last_use < best_program->last_use;  // least recently loaded or run
    }
    if (better) {
      best = pid;
      best_program = &p;
    }
  }
  return best;
}

void TpuAllocator::Evict(ProgramId pid) {
  Program& p = programs_.at(pid);
  layout_.Release(p.block);
  resident_.erase(p.offset.value());
  reserved_ -= p.size;
  p.resident = false;
  ++counters_.programs_evicted;
  Notify({PolicyEventKind::kProgramEvicted, p.size, p.offset, pid.value()});
}

}  // namespace hbmsim::allocator
