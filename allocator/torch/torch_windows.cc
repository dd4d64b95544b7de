// Limit windows (allocator/core/limit_window.h) for the PyTorch model.
//
// Without expandable segments the capacity is consulted only by cudaMalloc's
// `reserved + size <= capacity`, and nothing the allocator holds is sized by
// it: each such test narrows the window to one side of reserved + size, and a
// run at another limit of the window is a copy with that capacity.
//
// With expandable segments the capacity also sizes every VA range
// (ExpandableRangeSize: ceil(1.125 × capacity / page) pages), and so two
// things the allocator holds:
//
//   range i   [ mapped / free / unmapped blocks ...      | unmapped tail       ]
//             ^ base_i                                   ^ tail.addr           ^ base_i + range(capacity)
//   base_i = (small ranges reserved before i) × range_small(capacity)
//          + (large ranges reserved before i) × range_large(capacity)
//
// the tail's length, range(capacity) - (tail.addr - base_i), and every base.
// A decision that compares a tail's length with a length n (TailHolds) holds
// for the capacities whose range is at least (tail.addr - base_i) + n, an
// interval (range() only grows with the capacity); cuMemCreate's capacity
// test (MapBlock) narrows as cudaMalloc's does. A mapping that takes a tail
// whole keeps the capacities of that one range length when the tail is as
// long as the pages it maps, and the capacity alone when it is shorter (the
// length mapped, on both sides of the capacity test, is then the capacity's).
// The bases move with the capacity but keep their order, and every block keeps
// its offset in its range, so a decision that compares addresses comes out the
// same: CloneAt lays the ranges out again at the other capacity's sizes.
// Recorded addresses choose bases of their own: the window is then the
// capacity alone.
#include "allocator/torch/torch_allocator.h"

namespace hbmsim::allocator::torch {
namespace {

// No VA range is reserved larger (a capacity of 2^48 / 1.125, 250 TB, and
// above): 65,536 of them still have 64-bit addresses. Beyond any device, so
// the ranges of every real capacity are PyTorch's.
constexpr uint64_t kMaxRangeBytes = uint64_t{1} << 48;

}  // namespace

Bytes TorchAllocator::RangeSizeFor(Bytes memory, Bytes page) {
  // In 128 bits: 9/8 of a capacity near 2^64 does not fit in 64.
  const unsigned __int128 wanted = static_cast<unsigned __int128>(memory.value() / 8) * 9 + page.value() - 1;
  const unsigned __int128 bytes = wanted / page.value() * page.value();
  const uint64_t most = std::max<uint64_t>(kMaxRangeBytes / page.value(), 1) * page.value();
  return Bytes(static_cast<uint64_t>(std::min<unsigned __int128>(bytes, most)));
}

bool TorchAllocator::TrackLimitWindow() {
  if (options_.per_process_memory_fraction) return false;
  if (options_.expandable_segments && !segments_.empty()) return false;  // only from the first event
  windows_ = true;
  window_ = LimitWindow{};
  // An unknown capacity (Bytes::Max()) sizes ranges from expandable_va_capacity instead.
  if (options_.expandable_segments) window_.AtMost(Bytes::Max() - Bytes(1));
  return true;
}

std::unique_ptr<Allocator> TorchAllocator::CloneAt(Bytes limit) const {
  HBMSIM_DCHECK(window_.Contains(limit), "CloneAt a limit outside the window");
  auto copy = std::make_unique<TorchAllocator>(*this);
  copy->set_observer(nullptr);
  copy->options_.capacity = limit;
  if (options_.expandable_segments) copy->LayOutRangesAgain({ExpandableRangeSize(false), ExpandableRangeSize(true)});
  return copy;
}

bool TorchAllocator::CapacityHolds(Bytes reserved, Bytes size) {
  const bool holds = size <= options_.capacity.SaturatingSub(reserved);
  if (windows_) {
    if (holds) {
      window_.AtLeast(reserved + size);
    } else {
      window_.AtMost((reserved + size).SaturatingSub(Bytes(1)));
    }
  }
  return holds;
}

bool TorchAllocator::IsTail(BlockIndex b) const {
  const Block& blk = blocks_[b];
  return blk.expandable && blk.kind == Kind::kUnmapped && blk.next == kNil;
}

bool TorchAllocator::TailHolds(BlockIndex b, Bytes n) {
  const Block& tail = blocks_[b];
  const bool holds = tail.size >= n;
  if (windows_) {
    // tail.size = range(capacity) - offset: holds iff range(capacity) >= offset + n.
    const Bytes least = LeastCapacityForRange(tail.addr - tail.segment + n, PageSize(tail.small));
    HBMSIM_DCHECK(holds == (options_.capacity >= least), "a tail's length is its range's less its offset");
    if (holds) {
      window_.AtLeast(least);
    } else {
      window_.AtMost(least.SaturatingSub(Bytes(1)));
    }
  }
  return holds;
}

Bytes TorchAllocator::TailOrLess(BlockIndex b, Bytes n) {
  if (!IsTail(b)) return std::min(blocks_[b].size, n);
  if (TailHolds(b, n)) return n;
  if (windows_) window_.Only(options_.capacity);  // the whole tail: its length is the capacity's
  return blocks_[b].size;
}

// get_free_block's ranking of free expandable blocks: a block's length
// with its unmapped successor's. Both blocks are in one pool, so a tail on
// both sides is the same range length less different offsets, and only a
// tail on one side makes the capacity decide.
bool TorchAllocator::GrowsLess(BlockIndex a, BlockIndex b) {
  const auto grown = [&](BlockIndex x, BlockIndex& tail) {
    const Block& blk = blocks_[x];
    tail = kNil;
    if (blk.next == kNil || blocks_[blk.next].kind != Kind::kUnmapped) return blk.size;
    if (IsTail(blk.next)) {
      tail = blk.next;
      return blk.size;
    }
    return blk.size + blocks_[blk.next].size;
  };
  BlockIndex tail_a, tail_b;
  const Bytes ga = grown(a, tail_a);
  const Bytes gb = grown(b, tail_b);
  if ((tail_a == kNil) == (tail_b == kNil)) {
    if (tail_a == kNil) return ga < gb;
    return ga + blocks_[tail_a].size < gb + blocks_[tail_b].size;  // the range's length cancels out
  }
  if (tail_a != kNil) return gb > ga && !TailHolds(tail_a, gb - ga);  // ga + tail < gb
  return ga < gb || TailHolds(tail_b, ga - gb + Bytes(1));             // ga < gb + tail
}

// The least capacity below Bytes::Max() whose ranges of `page` pages hold
// `bytes`; Bytes::Max() when none does. range() never shrinks as the capacity
// grows, so a bisection finds it.
Bytes TorchAllocator::LeastCapacityForRange(Bytes bytes, Bytes page) const {
  const Bytes top = Bytes::Max() - Bytes(1);
  if (RangeSizeFor(top, page) < bytes) return Bytes::Max();
  uint64_t lo = 0, hi = top.value();  // range(hi) holds it
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (RangeSizeFor(Bytes(mid), page) >= bytes) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return Bytes(lo);
}

// Each range again at base = the ranges reserved before it, at this
// capacity's sizes; its blocks keep their offsets and its tail takes up the
// rest. The pools, keyed by address, are filed again.
void TorchAllocator::LayOutRangesAgain(const std::array<Bytes, 2>& before) {
  const Bytes range[2] = {ExpandableRangeSize(false), ExpandableRangeSize(true)};
  if (range[0] == before[0] && range[1] == before[1]) return;  // the same layout (and so any window of one limit)
  absl::btree_map<uint64_t, Segment> moved;
  for (auto& [old_base, seg] : segments_) {
    HBMSIM_DCHECK(seg.expandable && seg.base.value() == seg.ranges_before[0] * before[0].value() +
                                                        seg.ranges_before[1] * before[1].value(),
                  "with windows, every range is one the device reserved at the ranges' sizes");
    const Offset base = Offset(0) + Bytes(seg.ranges_before[0] * range[0].value()) +
                        Bytes(seg.ranges_before[1] * range[1].value());
    BlockIndex last = seg.head;
    for (BlockIndex b = seg.head; b != kNil; b = blocks_[b].next) {
      blocks_[b].addr = base + (blocks_[b].addr - seg.base);
      blocks_[b].segment = base;
      last = b;
    }
    const Bytes size = range[seg.small ? 1 : 0];
    if (size != seg.size) {
      HBMSIM_DCHECK(IsTail(last), "a range whose length the window lets change ends in its tail");
      blocks_[last].size = base + size - blocks_[last].addr;
    }
    seg.base = base;
    seg.size = size;
    moved.emplace(base.value(), seg);
  }
  segments_ = std::move(moved);
  device_.set_next_address(Offset(0) + Bytes(ranges_reserved_[0] * range[0].value()) +
                           Bytes(ranges_reserved_[1] * range[1].value()));
  for (Pool* pool : {&small_, &large_}) {
    pool->blocks = FreePool();
    pool->unmapped.clear();
  }
  for (const auto& [base, seg] : segments_) {
    for (BlockIndex b = seg.head; b != kNil; b = blocks_[b].next) {
      const Block& blk = blocks_[b];
      if (blk.kind == Kind::kFree) {
        PoolOf(blk.small).blocks.Insert(blk.stream.value(), blk.size.value(), blk.addr.value(), b, blk.expandable);
      } else if (blk.kind == Kind::kUnmapped) {
        InsertUnmapped(b);
      }
    }
  }
}

}  // namespace hbmsim::allocator::torch
