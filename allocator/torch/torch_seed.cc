// SeedSegment: the state at the start of a trace, segment by segment.
#include "allocator/torch/torch_allocator.h"
#include "fmt/format.h"

namespace hbmsim::torch {
namespace {

bool IsFreeState(BlockState s) { return s == BlockState::kFree; }

}  // namespace

absl::Status TorchAllocator::ValidateSeed(const SegmentSeed& seed) const {
  const auto invalid = [&](std::string_view what) {
    return absl::InvalidArgumentError(fmt::format("seeded segment at {}: {}", seed.base.value(), what));
  };
  if (seed.size.is_zero()) return invalid("empty segment");
  if (seed.blocks.empty()) return invalid("no blocks");
  if (!RangeIsFree(seed.base, seed.size)) return invalid("overlaps a segment already held");
  Bytes total;
  for (size_t i = 0; i < seed.blocks.size(); ++i) {
    const SeedBlock& b = seed.blocks[i];
    if (b.size.is_zero()) return invalid(fmt::format("block {} is empty", i));
    if (i > 0 && IsFreeState(b.state) && IsFreeState(seed.blocks[i - 1].state)) {
      return invalid(
          fmt::format("blocks {} and {} are both free (PyTorch would have merged them)", i - 1, i));
    }
    total += b.size;
  }
  if (total != seed.size) {
    return invalid(
        fmt::format("blocks sum to {} bytes, not the segment's {}", total.value(), seed.size.value()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Handle>> TorchAllocator::SeedSegment(const SegmentSeed& seed) {
  if (absl::Status s = ValidateSeed(seed); !s.ok()) return s;
  const bool small = seed.small_pool.value_or(seed.expandable ? seed.size < options_.large_segment_size
                                                              : seed.size.value() == kSmallBuffer);
  Segment seg{seed.base, seed.size, seed.stream, small, seed.expandable, kNil};
  const int64_t seg_size = static_cast<int64_t>(seed.size.value());
  stats_.reserved_bytes.Increase(small, seg_size);
  if (!seed.expandable) {
    stats_.segment.Increase(small, 1);
    if (seed.size >= options_.max_split_size) stats_.oversize_segments.Increase(1);
  }
  std::vector<Handle> handles;
  Offset addr = seed.base;
  BlockIndex prev = kNil;
  const bool split = seed.blocks.size() > 1;
  for (const SeedBlock& sb : seed.blocks) {
    Block blk;
    blk.addr = addr;
    blk.size = sb.size;
    blk.stream = seed.stream;
    blk.segment = seed.base;
    blk.small = small;
    blk.expandable = seed.expandable;
    blk.prev = prev;
    const BlockIndex b = NewBlock(blk);
    if (prev == kNil) seg.head = b;
    if (prev != kNil) blocks_[prev].next = b;
    prev = b;
    addr = addr + sb.size;
    const int64_t size = static_cast<int64_t>(sb.size.value());
    if (IsFreeState(sb.state)) {
      if (split && !seed.expandable) {
        stats_.inactive_split.Increase(small, 1);
        stats_.inactive_split_bytes.Increase(small, size);
      }
      continue;  // pooled once the chain is complete
    }
    Block& live = blocks_[b];
    live.kind = Kind::kAllocated;
    live.requested = sb.requested;
    live.id = sb.id;
    live.handle = next_handle_++;
    live_[live.handle] = b;
    stats_.allocation.Increase(small, 1);
    stats_.allocated_bytes.Increase(small, size);
    stats_.active.Increase(small, 1);
    stats_.active_bytes.Increase(small, size);
    stats_.requested_bytes.Increase(small, static_cast<int64_t>(sb.requested.value()));
    if (sb.size >= options_.max_split_size) stats_.oversize_allocations.Increase(1);
    if (sb.state == BlockState::kPendingFree) {
      MarkFreeRequested(b);
      pending_[live.handle] = b;
    }
    handles.push_back(Handle(live.handle));
  }
  segments_[seed.base.value()] = seg;
  for (BlockIndex b = seg.head; b != kNil; b = blocks_[b].next) {
    if (blocks_[b].kind == Kind::kFree) InsertIntoPool(b);
  }
  return handles;
}

}  // namespace hbmsim::torch
