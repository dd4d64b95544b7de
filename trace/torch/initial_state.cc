#include "trace/torch/initial_state.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>

#include "fmt/format.h"

namespace hbmsim::trace {
namespace {

constexpr size_t kMaxIssues = 100;
// The native allocator rounds every request up to a multiple of 512 bytes.
constexpr uint64_t kMinBlockSize = 512;
// Small-pool segments are exactly kSmallBuffer (2 MiB); large ones never are
// (20 MiB, or a request of more than 10 MiB rounded up to 2 MiB).
constexpr uint64_t kSmallBuffer = uint64_t{2} << 20;
// PyTorch's kSmallSize: the largest request of the small pool, and the most a
// large segment leaves unsplit after a block (should_split).
constexpr uint64_t kSmallSize = uint64_t{1} << 20;

uint64_t RoundedRequest(uint64_t size) {
  if (size < kMinBlockSize) return kMinBlockSize;
  return Bytes(size).RoundUp(kMinBlockSize).value();
}

InitialBlock FreeBlock(uint64_t begin, uint64_t end) {
  InitialBlock b;
  b.address = Offset(begin);
  b.size = Bytes(end - begin);
  return b;
}

struct Seg {
  uint64_t size = 0;
  StreamId stream;
  SegmentType type = SegmentType::kLarge;
  bool expandable = false;
  bool in_final = true;
};

struct Live {
  uint64_t size = 0;
  uint64_t requested = 0;
  bool size_known = true;
  bool pending = false;
  bool freed_in_trace = false;
  uint32_t frames = 0;
};

class BackwardWalk {
 public:
  BackwardWalk(const Snapshot& snap, DeviceId device) : snap_(snap) { state_.device = device; }

  InitialState Run() {
    LoadFinalState();
    const DeviceId dev = state_.device;
    if (dev.value() < snap_.device_traces.size()) {
      const std::vector<TraceEntry>& entries = snap_.device_traces[dev.value()].entries;
      for (size_t i = entries.size(); i-- > 0;) Undo(i, entries[i]);
    }
    Build();
    if (dev.value() < snap_.device_traces.size()) ClaimRemainders(snap_.device_traces[dev.value()].entries);
    return std::move(state_);
  }

 private:
  void LoadFinalState() {
    for (const SnapshotSegment& s : snap_.segments) {
      if (s.device != state_.device) continue;
      segs_[s.address.value()] = Seg{s.total_size.value(), s.stream, s.type, s.is_expandable, true};
      for (const SnapshotBlock& b : s.blocks) {
        if (b.state == BlockState::kFree) continue;
        live_[b.address.value()] = Live{b.size.value(), b.requested_size.value(),
                                        true,           b.state == BlockState::kPendingFree,
                                        false,          b.frames};
      }
    }
  }

  void Issue(std::string_view where, std::string what) {
    ++state_.issue_count;
    if (state_.issues.size() < kMaxIssues) state_.issues.push_back(fmt::format("{}: {}", where, what));
  }
  void Issue(size_t index, const TraceEntry& e, std::string_view what) {
    Issue(fmt::format("device_traces[{}][{}]: {} at 0x{:x}", state_.device.value(), index,
                      TraceActionName(e.action), e.addr.value()),
          std::string(what));
  }

  // The segment holding `addr`, or segs_.end().
  std::map<uint64_t, Seg>::iterator SegmentContaining(uint64_t addr) {
    auto it = segs_.upper_bound(addr);
    if (it == segs_.begin()) return segs_.end();
    --it;
    return addr < it->first + it->second.size ? it : segs_.end();
  }

  bool AnyLiveIn(uint64_t begin, uint64_t end) {
    const auto it = live_.lower_bound(begin);
    return it != live_.end() && it->first < end;
  }

  void Undo(size_t i, const TraceEntry& e) {
    switch (e.action) {
      case TraceAction::kAlloc:
        return UndoAlloc(i, e);
      case TraceAction::kFreeCompleted:
      case TraceAction::kFree:
        return UndoFree(i, e, /*pending=*/e.action == TraceAction::kFreeCompleted);
      case TraceAction::kFreeRequested:
        return UndoFreeRequested(i, e);
      case TraceAction::kSegmentAlloc:
        return UndoSegmentAlloc(i, e);
      case TraceAction::kSegmentFree:
        return AddSegment(i, e, /*merge=*/false);
      case TraceAction::kSegmentMap:
        return UndoMap(i, e);
      case TraceAction::kSegmentUnmap:
        return AddSegment(i, e, /*merge=*/true);
      default:
        return;  // snapshot, oom and unknown actions change no state
    }
  }

  void UndoAlloc(size_t i, const TraceEntry& e) {
    const auto it = live_.find(e.addr.value());
    if (it == live_.end()) return Issue(i, e, "no live block there to un-allocate");
    if (it->second.requested != e.size.value()) {
      Issue(i, e,
            fmt::format("requests {} bytes, but the live block there was requested as {}", e.size.value(),
                        it->second.requested));
    }
    live_.erase(it);
  }

  void UndoFree(size_t i, const TraceEntry& e, bool pending) {
    const uint64_t addr = e.addr.value();
    if (SegmentContaining(addr) == segs_.end()) Issue(i, e, "outside every segment");
    if (live_.contains(addr)) return Issue(i, e, "a block is already live there");
    // PyTorch records a free with the stack of the allocation it ends.
    live_[addr] =
        Live{RoundedRequest(e.size.value()), e.size.value(), false, pending, true, snap_.ContextOf(e).frames};
  }

  void UndoFreeRequested(size_t i, const TraceEntry& e) {
    const auto it = live_.find(e.addr.value());
    if (it == live_.end()) return Issue(i, e, "no live block there");
    it->second.pending = false;
  }

  void UndoSegmentAlloc(size_t i, const TraceEntry& e) {
    const uint64_t addr = e.addr.value(), size = e.size.value();
    const auto it = segs_.find(addr);
    if (it == segs_.end() || it->second.size != size) {
      return Issue(i, e, fmt::format("no segment of {} bytes starts there", size));
    }
    if (AnyLiveIn(addr, addr + size)) Issue(i, e, "blocks are still live in the segment");
    segs_.erase(it);
  }

  // Undoing segment_free (a whole segment) or segment_unmap (a range of an
  // expandable segment, merged with the ranges it touches, as MemoryViz does).
  void AddSegment(size_t i, const TraceEntry& e, bool merge) {
    const uint64_t addr = e.addr.value(), size = e.size.value();
    auto next = segs_.lower_bound(addr);
    if ((next != segs_.end() && next->first < addr + size) || SegmentContaining(addr) != segs_.end()) {
      return Issue(i, e, "overlaps a segment that exists");
    }
    const SegmentType type = size == kSmallBuffer ? SegmentType::kSmall : SegmentType::kLarge;
    auto it = segs_.emplace(addr, Seg{size, e.stream, type, merge, false}).first;
    if (!merge) return;
    next = std::next(it);
    if (next != segs_.end() && addr + size == next->first && next->second.stream == e.stream) {
      it->second.size += next->second.size;
      it->second.in_final = next->second.in_final;
      segs_.erase(next);
    }
    if (it != segs_.begin()) {
      const auto prev = std::prev(it);
      if (prev->first + prev->second.size == addr && prev->second.stream == e.stream) {
        prev->second.size += it->second.size;
        segs_.erase(it);
      }
    }
  }

  // Undoing segment_map: the range was not mapped before, so it is cut out
  // of the expandable segment that holds it.
  void UndoMap(size_t i, const TraceEntry& e) {
    const uint64_t addr = e.addr.value(), end = addr + e.size.value();
    const auto it = SegmentContaining(addr);
    if (it == segs_.end() || end > it->first + it->second.size) {
      return Issue(i, e, "the mapped range is not inside one segment");
    }
    if (AnyLiveIn(addr, end)) Issue(i, e, "blocks are still live in the mapped range");
    const uint64_t seg_addr = it->first, seg_end = it->first + it->second.size;
    Seg seg = it->second;
    segs_.erase(it);
    if (seg_addr < addr)
      segs_[seg_addr] = Seg{addr - seg_addr, seg.stream, seg.type, seg.expandable, seg.in_final};
    if (end < seg_end) segs_[end] = Seg{seg_end - end, seg.stream, seg.type, seg.expandable, seg.in_final};
  }

  // Tiles each segment with its live blocks and the free gaps between them.
  void Build() {
    auto block = live_.begin();
    for (const auto& [addr, seg] : segs_) {
      InitialSegment out{Offset(addr),   Bytes(seg.size), seg.stream, seg.type,
                         seg.expandable, seg.in_final,    {}};
      const uint64_t end = addr + seg.size;
      for (; block != live_.end() && block->first < addr; ++block) OrphanBlock(block->first);
      uint64_t cursor = addr;
      for (; block != live_.end() && block->first < end; ++block) {
        const Live& b = block->second;
        if (block->first < cursor || block->first + b.size > end) OverlappingBlock(block->first);
        if (block->first > cursor) out.blocks.push_back(FreeBlock(cursor, block->first));
        out.blocks.push_back(InitialBlock{Offset(block->first), Bytes(b.size), true, b.size_known, b.pending,
                                          Bytes(b.requested), b.frames});
        cursor = std::max(cursor, block->first + b.size);
        ++state_.live_blocks;
        if (b.freed_in_trace) ++state_.live_blocks_freed_in_trace;
      }
      if (cursor < end) out.blocks.push_back(FreeBlock(cursor, end));
      state_.segments.push_back(std::move(out));
    }
    for (; block != live_.end(); ++block) OrphanBlock(block->first);
  }

  // A block freed in the trace came back at its request rounded to 512, but
  // the native allocator hands out a large block whole when splitting it
  // would leave kSmallSize or less: the real block may own some of the free
  // gap after it. The trace says how much where it places the first block in
  // that gap while the owner is still live: an alloc lands at the start of a
  // free block, and two free blocks side by side would have merged, so the
  // space before it can only be the owner's remainder (when no more than the
  // allocator leaves unsplit: MostLeftUnsplit). Without this the
  // remainder merges into the free block after it, which a best fit then
  // sees as larger than it was (gen5_medium_512_training's 8 MiB request at
  // device_traces[0][179] took a 20 MiB block, not a 21 MiB one, because a
  // 4 MiB block before it owned 960 KiB). A gap the owner frees first tells
  // nothing, and needs nothing: once merged, either reading is one free block.
  struct Gap {
    size_t segment, block;  // the free block in state_.segments; its owner is block - 1
    uint64_t end;
  };
  void ClaimRemainders(const std::vector<TraceEntry>& entries) {
    std::map<uint64_t, Gap> gaps;         // by first byte
    std::map<uint64_t, uint64_t> owners;  // owner's address -> its gap's first byte
    for (size_t i = 0; i < state_.segments.size(); ++i) {
      const InitialSegment& seg = state_.segments[i];
      if (seg.type != SegmentType::kLarge || seg.is_expandable) continue;
      for (size_t j = 1; j < seg.blocks.size(); ++j) {
        const InitialBlock& owner = seg.blocks[j - 1];
        const InitialBlock& gap = seg.blocks[j];
        if (gap.live || !owner.live || owner.size_known) continue;
        gaps[gap.address.value()] = Gap{i, j, (gap.address + gap.size).value()};
        owners[owner.address.value()] = gap.address.value();
      }
    }
    for (const TraceEntry& e : entries) {
      if (gaps.empty()) return;
      const uint64_t addr = e.addr.value();
      if (e.action == TraceAction::kFreeCompleted || e.action == TraceAction::kFree) {
        if (const auto o = owners.find(addr); o != owners.end()) {
          gaps.erase(o->second);
          owners.erase(o);
        }
      } else if (e.action == TraceAction::kAlloc) {
        auto it = gaps.upper_bound(addr);
        if (it == gaps.begin() || addr >= std::prev(it)->second.end) continue;
        --it;
        InitialBlock& owner = state_.segments[it->second.segment].blocks[it->second.block - 1];
        if (addr > it->first && addr - it->first <= MostLeftUnsplit(owner)) Claim(it->second, addr - it->first);
        owners.erase(owner.address.value());
        gaps.erase(it);
      }
    }
  }
  // What the native allocator may have left unsplit after `owner`: at most
  // kSmallSize, unless the recording set max_split_size and the owner is that
  // large, which is never split (its remainder is bounded by
  // max_non_split_rounding, which the settings do not record: the trace's
  // evidence is taken as it is).
  uint64_t MostLeftUnsplit(const InitialBlock& owner) const {
    const std::optional<int64_t> max_split =
        snap_.allocator_settings ? snap_.allocator_settings->max_split_size : std::nullopt;
    if (max_split && *max_split > 0 && owner.size.value() >= static_cast<uint64_t>(*max_split)) return UINT64_MAX;
    return kSmallSize;
  }
  void Claim(const Gap& gap, uint64_t bytes) {
    std::vector<InitialBlock>& blocks = state_.segments[gap.segment].blocks;
    blocks[gap.block - 1].size += Bytes(bytes);
    blocks[gap.block].address = blocks[gap.block].address + Bytes(bytes);
    blocks[gap.block].size = blocks[gap.block].size - Bytes(bytes);
    ++state_.remainders_claimed;
  }

  void OrphanBlock(uint64_t addr) {
    Issue("initial state", fmt::format("live block at 0x{:x} is outside every segment", addr));
  }
  void OverlappingBlock(uint64_t addr) {
    Issue("initial state",
          fmt::format("live block at 0x{:x} overlaps its neighbour or its segment's end", addr));
  }

  const Snapshot& snap_;
  InitialState state_;
  std::map<uint64_t, Seg> segs_;   // by base address
  std::map<uint64_t, Live> live_;  // by block address
};

}  // namespace

InitialState RebuildInitialState(const Snapshot& snap, DeviceId device) {
  return BackwardWalk(snap, device).Run();
}

std::shared_ptr<const InitialState> InitialStateCache::Of(const Snapshot& snap, DeviceId device) {
  // Rebuilt under the lock: two trials asking at once wait for one walk
  // instead of making two.
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<const InitialState>& state = by_device_[device.value()];
  if (state == nullptr) state = std::make_shared<const InitialState>(RebuildInitialState(snap, device));
  return state;
}

}  // namespace hbmsim::trace
