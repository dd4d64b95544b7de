#include "allocator/core/reserved_parts.h"

#include <algorithm>
#include <map>
#include <utility>

#include "allocator/core/allocator.h"

namespace hbmsim::allocator {
namespace {

bool HoldsLive(BlockState s) { return s != BlockState::kFree && s != BlockState::kUnmapped; }

// Collects one region's blocks, then classifies them: whether a region holds
// a live block is known only once all its blocks were seen.
class ReservedVisitor : public MemoryMapVisitor {
 public:
  ReservedVisitor(const Allocator& a, size_t largest_free, const std::function<void(const BlockInfo&)>& on_live,
                  const std::function<void(const FreePiece&)>& on_free)
      : allocator_(a), largest_free_(largest_free), on_live_(on_live), on_free_(on_free) {}

  void OnRegion(const RegionInfo& r) override {
    Flush();
    region_ = r;
    open_ = true;
  }
  void OnBlock(const BlockInfo& b) override { blocks_.push_back(b); }

  ReservedWalk Finish() {
    Flush();
    ReservedWalk out;
    out.reserved = reserved_;
    out.in_use = in_use_;
    out.requested = requested_;
    std::vector<ReservedPart> rest;
    for (auto& [key, part] : parts_) (key.first == rounding_cause_ ? out.parts : rest).push_back(part);
    std::stable_sort(rest.begin(), rest.end(),
                     [](const ReservedPart& a, const ReservedPart& b) { return a.bytes > b.bytes; });
    out.parts.insert(out.parts.end(), rest.begin(), rest.end());
    std::sort_heap(free_.begin(), free_.end(), Before);
    out.largest_free = std::move(free_);
    return out;
  }

 private:
  void Flush() {
    if (!open_) return;
    reserved_ += region_.size;
    const bool holds_live = std::any_of(blocks_.begin(), blocks_.end(),
                                        [](const BlockInfo& b) { return HoldsLive(b.state); });
    for (size_t i = 0; i < blocks_.size(); ++i) {
      const BlockInfo& b = blocks_[i];
      if (b.state == BlockState::kUnmapped) {
        reserved_ -= b.size;
        continue;
      }
      const BlockContext context{region_, b, holds_live, i + 1 == blocks_.size(), i > 0 ? &blocks_[i - 1] : nullptr,
                                 i + 1 < blocks_.size() ? &blocks_[i + 1] : nullptr};
      Classify(context);
    }
    blocks_.clear();
    open_ = false;
  }

  void Classify(const BlockContext& c) {
    const BlockInfo& b = c.block;
    ReservedCause cause = allocator_.CauseOf(c);
    Bytes bytes = b.size;
    if (b.state == BlockState::kInUse) {
      const Bytes asked = std::min(b.requested, b.size);
      in_use_ += b.size;
      requested_ += asked;
      bytes = b.size - asked;
      if (rounding_cause_ != cause.cause) rounding_cause_ = cause.cause;
      if (on_live_) on_live_(b);
    } else if (b.state == BlockState::kFree) {
      KeepIfLargest(b, cause);
      if (!cause.inner_size.is_zero()) return ClassifyWithInner(b, cause);
      if (on_free_) on_free_({b.offset, b.offset, b.size, cause.cause, cause.key});
    }
    AddToPart(cause.cause, cause.key, bytes);
  }

  // A free block of two causes: the inner run, and the rest (the runs below
  // and above it), each part counting the block once.
  void ClassifyWithInner(const BlockInfo& b, const ReservedCause& c) {
    const Offset inner_end = c.inner_offset + c.inner_size;
    const Offset end = b.offset + b.size;
    AddToPart(c.cause, c.key, b.size - c.inner_size);
    AddToPart(c.inner_cause, c.key, c.inner_size);
    if (!on_free_) return;
    if (c.inner_offset > b.offset) on_free_({b.offset, b.offset, c.inner_offset - b.offset, c.cause, c.key});
    on_free_({b.offset, c.inner_offset, c.inner_size, c.inner_cause, c.key});
    if (end > inner_end) on_free_({b.offset, inner_end, end - inner_end, c.cause, c.key});
  }

  // Runs of blocks share a part (every live block is "rounding"): the last
  // part is found again without building its key.
  void AddToPart(const std::string& cause, const std::string& key, Bytes bytes) {
    if (last_part_ == nullptr || last_part_->cause != cause || last_part_->key != key) {
      const auto [it, added] = parts_.try_emplace({cause, key});
      if (added) {
        it->second.cause = cause;
        it->second.key = key;
      }
      last_part_ = &it->second;  // a std::map's values stay where they are
    }
    last_part_->bytes += bytes;
    ++last_part_->blocks;
  }

  // The free blocks Finish lists: the `largest_free_` largest (ties by the
  // lower offset), kept as a heap whose top is the one to drop next, so a
  // walk of many free blocks copies the causes of only a few.
  static bool Outranks(Bytes size, Offset offset, const CachedBlock& other) {
    return size != other.size ? size > other.size : offset < other.offset;
  }
  static bool Before(const CachedBlock& a, const CachedBlock& b) { return Outranks(a.size, a.offset, b); }
  void KeepIfLargest(const BlockInfo& b, const ReservedCause& c) {
    if (largest_free_ == 0) return;
    if (free_.size() == largest_free_) {
      if (!Outranks(b.size, b.offset, free_.front())) return;  // the front is the least of those kept
      std::pop_heap(free_.begin(), free_.end(), Before);
      free_.pop_back();
    }
    free_.push_back({b.offset, b.size, c.cause, c.key, region_.base, region_.index, c.inner_cause, c.inner_offset,
                     c.inner_size});
    std::push_heap(free_.begin(), free_.end(), Before);
  }

  const Allocator& allocator_;
  const size_t largest_free_;
  const std::function<void(const BlockInfo&)>& on_live_;
  const std::function<void(const FreePiece&)>& on_free_;
  RegionInfo region_;
  bool open_ = false;
  std::vector<BlockInfo> blocks_;
  Bytes reserved_, in_use_, requested_;
  std::string rounding_cause_ = "rounding";
  // Ordered by (cause, key): the order of equal-sized parts never depends on a hash.
  std::map<std::pair<std::string, std::string>, ReservedPart> parts_;
  ReservedPart* last_part_ = nullptr;
  std::vector<CachedBlock> free_;  // a heap by Before
};

class ReservedBytesVisitor : public MemoryMapVisitor {
 public:
  void OnRegion(const RegionInfo& r) override { reserved += r.size; }
  void OnBlock(const BlockInfo& b) override {
    if (b.state == BlockState::kUnmapped) reserved -= b.size;
  }
  Bytes reserved;
};

}  // namespace

ReservedCause GenericCause(const BlockContext& c) {
  switch (c.block.state) {
    case BlockState::kInUse:
      return {"rounding", ""};
    case BlockState::kPendingFree:
      return {"pending_free", ""};
    case BlockState::kProgram:
      return {"program", ""};
    case BlockState::kFree:
    case BlockState::kUnmapped:
      break;
  }
  return {"cached_free", ""};
}

ReservedWalk WalkReserved(const Allocator& a, size_t largest_free,
                          const std::function<void(const BlockInfo&)>& on_live,
                          const std::function<void(const FreePiece&)>& on_free) {
  ReservedVisitor v(a, largest_free, on_live, on_free);
  a.WalkMemoryMap(v);
  return v.Finish();
}

Bytes ReservedBytesByWalk(const Allocator& a) {
  ReservedBytesVisitor v;
  a.WalkMemoryMap(v);
  return v.reserved;
}

}  // namespace hbmsim::allocator
