// Read-only questions about the `tpu` policy: stats, counters, the memory map,
// what the ladder could still reach, and the invariants.
#include <algorithm>
#include <utility>

#include "allocator/tpu/tpu_allocator.h"
#include "fmt/format.h"

namespace hbmsim::allocator {

Bytes TpuAllocator::FreeAfterLadder() const {
  return options_.hbm_bytes.SaturatingSub(in_use_).SaturatingSub(reserved_);
}

Bytes TpuAllocator::ReservableLimit() const {
  HbmLayout::Ref top = HbmLayout::kNone;  // the block at 0 when no program is resident
  if (!resident_.empty()) top = programs_.at(resident_.rbegin()->second).block;
  return reserved_ + layout_.FreeBlockAbove(top);
}

// The ladder passes through these layouts (q = queued frees completed, when
// queued_free_retry): now; q; q compacted; q with every evictable program
// gone, compacted or not. Compaction places buffers by their order alone, so
// "evicted then compacted" is the same layout whichever way it was reached.
// "Evicted, not compacted" is reachable only by a request that rung 2 skipped
// (larger than the free bytes after rung 1) or when defragment is off.
Bytes TpuAllocator::LargestRequestNow() const {
  const bool q = options_.queued_free_retry;
  Bytes largest = layout_.largest_free_block();
  if (q) largest = std::max(largest, LargestReachable({.complete_queued_frees = true}));
  if (options_.defragment) {
    largest = std::max(largest, LargestReachable({.complete_queued_frees = q, .compact = true}));
  }
  if (options_.evict_programs) {
    const Bytes evicted = LargestReachable({.complete_queued_frees = q, .evict_programs = true});
    const Bytes free_after_rung1 = layout_.free_bytes() + (q ? queued_bytes_ : Bytes(0));
    if (!options_.defragment || evicted > free_after_rung1) largest = std::max(largest, evicted);
    if (options_.defragment) {
      largest = std::max(
          largest, LargestReachable({.complete_queued_frees = q, .evict_programs = true, .compact = true}));
    }
  }
  return largest;
}

// The largest free block of the layout `reach` leads to. O(programs) in the
// common case (every buffer fits above the highest program that stays), a
// walk of the blocks otherwise.
Bytes TpuAllocator::LargestReachable(const Reach& reach) const {
  const bool frees_queued = reach.complete_queued_frees && !queued_.empty();
  auto stays = [&](ProgramId pid) { return !(reach.evict_programs && IsEvictable(pid)); };
  auto role_of = [&](const HbmLayout::Block& b) {
    switch (b.state) {
      case BlockState::kInUse:
        return reach.compact ? HbmLayout::Role::kMovable : HbmLayout::Role::kFixed;
      case BlockState::kPendingFree:
        return reach.complete_queued_frees ? HbmLayout::Role::kFree : HbmLayout::Role::kFixed;
      case BlockState::kProgram:
        return stays(ProgramId(b.owner)) ? HbmLayout::Role::kFixed : HbmLayout::Role::kFree;
      default:
        return HbmLayout::Role::kFree;
    }
  };
  if (!reach.compact) {
    const bool evicts =
        reach.evict_programs && std::any_of(resident_.begin(), resident_.end(),
                                            [&](const auto& entry) { return !stays(entry.second); });
    if (!frees_queued && !evicts) return layout_.largest_free_block();
    uint64_t run = 0, largest = 0;
    layout_.ForEach([&](const HbmLayout::Block& block) {
      run = role_of(block) == HbmLayout::Role::kFree ? run + block.size.value() : 0;
      largest = std::max(largest, run);
    });
    return Bytes(largest);
  }
  // Compaction with only programs fixed, all buffers above the top one.
  if (queued_.empty() || reach.complete_queued_frees) {
    const Bytes buffers = reach.complete_queued_frees ? in_use_ - queued_bytes_ : in_use_;
    uint64_t cursor = 0, largest = 0;
    for (const auto& [offset, pid] : resident_) {
      if (!stays(pid)) continue;
      largest = std::max(largest, offset - cursor);
      cursor = offset + programs_.at(pid).size.value();
    }
    const Bytes above = options_.hbm_bytes - Bytes(cursor);
    if (buffers <= above) return std::max(Bytes(largest), above - buffers);
  }
  return layout_.PlanCompaction(role_of, [](HbmLayout::Ref, uint64_t, const HbmLayout::Block&) {});
}

AllocatorStats TpuAllocator::GetStats() const {
  AllocatorStats s;
  s.num_allocs = num_allocs_;
  s.bytes_in_use = static_cast<int64_t>(in_use_.value());
  s.peak_bytes_in_use = static_cast<int64_t>(peak_in_use_.value());
  s.largest_alloc_size = static_cast<int64_t>(largest_alloc_.value());
  s.bytes_limit = StatBytes(options_.hbm_bytes);
  s.bytes_reserved = static_cast<int64_t>(reserved_.value());
  s.peak_bytes_reserved = static_cast<int64_t>(peak_reserved_.value());
  s.bytes_reservable_limit = StatBytes(ReservableLimit());
  s.largest_free_block_bytes = StatBytes(LargestRequestNow());
  return s;
}

void TpuAllocator::AppendCounters(Counters& out) const {
  const TpuCounters& c = counters_;
  out.push_back({"queued_free_waits", c.queued_free_waits});
  out.push_back({"queued_frees_completed", c.queued_frees_completed});
  out.push_back({"defragmentations", c.defragmentations});
  out.push_back({"buffers_moved", c.buffers_moved});
  out.push_back({"bytes_moved", c.bytes_moved});
  out.push_back({"programs_evicted", c.programs_evicted});
  out.push_back({"programs_reloaded", c.programs_reloaded});
  out.push_back({"program_load_failures", c.program_load_failures});
  out.push_back({"padding_bytes", c.padding_bytes});
  out.push_back({"padding_bytes_in_use", static_cast<int64_t>(padding_in_use_.value())});
  out.push_back({"queued_free_bytes", static_cast<int64_t>(queued_bytes_.value())});
  out.push_back({"resident_programs", static_cast<int64_t>(resident_.size())});
  out.push_back(
      {"largest_contiguous_free_block_bytes", static_cast<int64_t>(layout_.largest_free_block().value())});
}

void TpuAllocator::WalkMemoryMap(MemoryMapVisitor& v) const {
  v.OnRegion(RegionInfo{Offset(0), options_.hbm_bytes, 0});
  layout_.ForEach([&](const HbmLayout::Block& block) {
    BlockInfo info;
    info.offset = Offset(block.offset);
    info.size = block.size;
    info.state = block.state;
    if (block.state == BlockState::kInUse || block.state == BlockState::kPendingFree) {
      const Buffer& b = buffers_[RefOf(block.owner)];
      info.requested = b.requested;
      info.handle = block.owner;
      info.id = b.id.value();
      info.stream = b.stream.value();
    } else if (block.state == BlockState::kProgram) {
      info.requested = block.size;
      info.id = block.owner;
    }
    v.OnBlock(info);
  });
}

std::vector<TpuBufferInfo> TpuAllocator::LiveBuffers() const {
  std::vector<TpuBufferInfo> out;
  out.reserve(live_buffers_);
  layout_.ForEach([&](const HbmLayout::Block& block) {
    if (block.state != BlockState::kInUse && block.state != BlockState::kPendingFree) return;
    const Buffer& b = buffers_[RefOf(block.owner)];
    std::optional<TensorShape> shape;
    if (auto it = shapes_.find(b.handle); it != shapes_.end()) shape = it->second;
    out.push_back({b.id, b.stream, Offset(block.offset), block.size, b.requested,
                   block.state == BlockState::kPendingFree, shape});
  });
  // Offsets are unique, so this order is total.
  std::sort(out.begin(), out.end(), [](const TpuBufferInfo& a, const TpuBufferInfo& b) {
    return a.padded != b.padded ? a.padded > b.padded : a.offset < b.offset;
  });
  return out;
}

std::vector<TpuProgramInfo> TpuAllocator::ResidentPrograms() const {
  std::vector<TpuProgramInfo> out;
  for (const auto& [offset, pid] : resident_) {
    out.push_back({pid, Offset(offset), programs_.at(pid).size, last_run_ == pid});
  }
  return out;
}

void TpuAllocator::RecordSnapshot(EventIndex event, bool program_load, uint64_t id, Bytes rounded) {
  if (!options_.log_allocations_on_oom) return;
  TpuOomSnapshot s;
  s.event = event;
  s.program_load = program_load;
  s.id = id;
  s.rounded = rounded;
  s.free_bytes = FreeAfterLadder();
  s.largest_free_block = LargestRequestNow();
  s.buffers = LiveBuffers();
  s.programs = ResidentPrograms();
  oom_snapshots_.push_back(std::move(s));
}

std::vector<TpuOomSnapshot> TpuAllocator::TakeOomSnapshots() { return std::exchange(oom_snapshots_, {}); }


// The TPU runtime's terms: a buffer's tiling padding, a loaded program's
// reservation, a deallocation the device has not finished (queued), the open
// space, and gaps. The open space is the free block right above the highest
// resident program (at 0 when none): what the runtime reports as reservable
// (bytes_reservable_limit − bytes_reserved), where the program stack grows.
// Any other free block is a gap: a hole among the buffers (above the top one
// included) or among the programs (under the lowest included), reused only by
// a request that fits it, a defragmentation or an unload.
ReservedCause TpuAllocator::CauseOf(const BlockContext& c) const {
  switch (c.block.state) {
    case BlockState::kInUse:
      return {"padding", ""};
    case BlockState::kProgram:
      return {"program_reservation", ""};
    case BlockState::kPendingFree:
      return {"queued_free", ""};
    case BlockState::kFree:
    case BlockState::kUnmapped:
      break;
  }
  return {c.block.offset == ReservableStart() ? "open_space" : "gap", ""};
}

Offset TpuAllocator::ReservableStart() const {
  if (resident_.empty()) return Offset(0);
  const Program& highest = programs_.at(resident_.rbegin()->second);
  return highest.offset + highest.size;
}

}  // namespace hbmsim::allocator
