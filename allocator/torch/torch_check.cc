// CheckInvariants: the shared tiling oracle, then the segment chains, the pools
// and a full recount of the stats (see the equations in the header).
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "allocator/torch/torch_allocator.h"
#include "fmt/format.h"

namespace hbmsim::allocator::torch {
namespace {

absl::Status Broken(std::string msg) { return absl::InternalError(std::move(msg)); }

}  // namespace

absl::Status TorchAllocator::CheckInvariants() const {
  if (absl::Status s = CheckMemoryMapTiling(*this); !s.ok()) return s;
  if (absl::Status s = CheckSegmentChains(); !s.ok()) return s;
  if (absl::Status s = CheckPools(); !s.ok()) return s;
  return CheckStatsRecount();
}

absl::Status TorchAllocator::CheckSegmentChains() const {
  for (const auto& [base, seg] : segments_) {
    BlockIndex prev = kNil;
    for (BlockIndex b = seg.head; b != kNil; prev = b, b = blocks_[b].next) {
      const Block& blk = blocks_[b];
      if (blk.prev != prev) return Broken(fmt::format("block at {} has a wrong prev link", blk.addr.value()));
      if (blk.segment != seg.base || blk.stream != seg.stream || blk.small != seg.small ||
          blk.expandable != seg.expandable) {
        return Broken(fmt::format("block at {} disagrees with its segment at {}", blk.addr.value(), base));
      }
      if (prev == kNil) continue;
      const Kind a = blocks_[prev].kind;
      if ((a == Kind::kFree || a == Kind::kUnmapped) && a == blk.kind) {
        return Broken(fmt::format("neighbouring blocks at {} and {} should have merged",
                                  blocks_[prev].addr.value(), blk.addr.value()));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status TorchAllocator::CheckPools() const {
  // Expected membership, rebuilt from the chains.
  std::set<std::tuple<bool, uint64_t, uint64_t, uint64_t>> free_blocks, unmapped;
  for (const auto& [base, seg] : segments_) {
    for (BlockIndex b = seg.head; b != kNil; b = blocks_[b].next) {
      const Block& blk = blocks_[b];
      if (blk.kind == Kind::kFree)
        free_blocks.insert({blk.small, blk.stream.value(), blk.size.value(), blk.addr.value()});
      if (blk.kind == Kind::kUnmapped) unmapped.insert({blk.small, blk.stream.value(), 0, blk.addr.value()});
    }
  }
  size_t pooled = 0, pooled_unmapped = 0;
  for (const bool small : {true, false}) {
    const FreePool& pool = PoolOf(small).blocks;
    if (absl::Status s = pool.CheckInvariants(); !s.ok()) return s;
    std::optional<std::string> broken;
    uint64_t expandable = 0;
    pool.ForEach([&](uint64_t stream, const PoolEntry& e) {
      ++pooled;
      const Block& blk = blocks_[e.handle];
      expandable += blk.expandable ? 1 : 0;
      if (blk.kind != Kind::kFree || blk.small != small || blk.stream.value() != stream ||
          blk.size.value() != e.size || blk.addr.value() != e.ptr ||
          !free_blocks.contains({small, stream, e.size, e.ptr})) {
        if (!broken) {
          broken = fmt::format("pool entry ({}, {}, {}) is not a free block of that pool", stream, e.size, e.ptr);
        }
      }
    });
    if (broken) return Broken(*broken);
    if (expandable != pool.expandable_entries()) {
      return Broken(fmt::format("pool counts {} expandable blocks, holds {}", pool.expandable_entries(), expandable));
    }
    for (const AddrKey& k : PoolOf(small).unmapped) {
      ++pooled_unmapped;
      if (!unmapped.contains({small, k.stream, 0, k.addr}) || blocks_[k.block].addr.value() != k.addr) {
        return Broken(fmt::format("unmapped entry ({}, {}) is not an unmapped block", k.stream, k.addr));
      }
    }
  }
  if (pooled != free_blocks.size() || pooled_unmapped != unmapped.size()) {
    return Broken(fmt::format("pools hold {} free and {} unmapped blocks, the segments {} and {}", pooled,
                              pooled_unmapped, free_blocks.size(), unmapped.size()));
  }
  return absl::OkStatus();
}

absl::Status TorchAllocator::CheckStatsRecount() const {
  TorchStats want;  // only the `current` values are compared
  size_t live = 0, pending = 0;
  for (const auto& [base, seg] : segments_) {
    if (!seg.expandable) {
      want.segment.by_type[seg.small ? 1 : 2].current += 1;
      want.reserved_bytes.by_type[seg.small ? 1 : 2].current += static_cast<int64_t>(seg.size.value());
    }
    for (BlockIndex b = seg.head; b != kNil; b = blocks_[b].next) {
      const Block& blk = blocks_[b];
      const int t = blk.small ? 1 : 2;
      const int64_t size = static_cast<int64_t>(blk.size.value());
      if (seg.expandable && blk.kind != Kind::kUnmapped) want.reserved_bytes.by_type[t].current += size;
      if (blk.kind == Kind::kAllocated) {
        want.allocation.by_type[t].current += 1;
        want.allocated_bytes.by_type[t].current += size;
      }
      if (blk.kind == Kind::kAllocated || blk.kind == Kind::kPendingFree) {
        ++live;
        pending += blk.kind == Kind::kPendingFree;
        want.active.by_type[t].current += 1;
        want.active_bytes.by_type[t].current += size;
        want.requested_bytes.by_type[t].current += static_cast<int64_t>(blk.requested.value());
      }
      if (blk.kind == Kind::kFree && !seg.expandable && IsSplit(b)) {
        want.inactive_split.by_type[t].current += 1;
        want.inactive_split_bytes.by_type[t].current += size;
      }
    }
  }
  const std::pair<const char*, std::pair<const StatArray*, const StatArray*>> arrays[] = {
      {"allocation", {&want.allocation, &stats_.allocation}},
      {"allocated_bytes", {&want.allocated_bytes, &stats_.allocated_bytes}},
      {"active", {&want.active, &stats_.active}},
      {"active_bytes", {&want.active_bytes, &stats_.active_bytes}},
      {"requested_bytes", {&want.requested_bytes, &stats_.requested_bytes}},
      {"segment", {&want.segment, &stats_.segment}},
      {"reserved_bytes", {&want.reserved_bytes, &stats_.reserved_bytes}},
      {"inactive_split", {&want.inactive_split, &stats_.inactive_split}},
      {"inactive_split_bytes", {&want.inactive_split_bytes, &stats_.inactive_split_bytes}},
  };
  for (const auto& [name, pair] : arrays) {
    const auto& [expected, actual] = pair;
    for (int t : {1, 2}) {
      if (expected->by_type[t].current != actual->by_type[t].current) {
        return Broken(fmt::format("{}.{}.current is {} but a recount gives {}", name,
                                  t == 1 ? "small_pool" : "large_pool", actual->by_type[t].current,
                                  expected->by_type[t].current));
      }
    }
    if (actual->by_type[0].current != actual->by_type[1].current + actual->by_type[2].current) {
      return Broken(fmt::format("{}.all.current is not the sum of its pools", name));
    }
  }
  if (live != live_.size() || pending != pending_.size()) {
    return Broken(fmt::format("{} active blocks ({} pending) but {} handles ({} pending)", live, pending,
                              live_.size(), pending_.size()));
  }
  return absl::OkStatus();
}

}  // namespace hbmsim::allocator::torch
