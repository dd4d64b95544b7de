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
  ReservedVisitor(const Allocator& a, const std::function<void(const BlockInfo&)>& on_live,
                  const std::function<void(const FreePiece&)>& on_free)
      : allocator_(a), on_live_(on_live), on_free_(on_free) {}

  void OnRegion(const RegionInfo& r) override {
    Flush();
    region_ = r;
    open_ = true;
  }
  void OnBlock(const BlockInfo& b) override { blocks_.push_back(b); }

  ReservedWalk Finish(size_t largest_free) {
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
    std::stable_sort(free_.begin(), free_.end(), [](const CachedBlock& a, const CachedBlock& b) {
      return a.size != b.size ? a.size > b.size : a.offset < b.offset;
    });
    if (free_.size() > largest_free) free_.resize(largest_free);
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
      rounding_cause_ = cause.cause;
      if (on_live_) on_live_(b);
    } else if (b.state == BlockState::kFree) {
      free_.push_back({b.offset, b.size, cause.cause, cause.key, region_.base, region_.index, cause.inner_cause,
                       cause.inner_offset, cause.inner_size});
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

  void AddToPart(const std::string& cause, const std::string& key, Bytes bytes) {
    ReservedPart& part = parts_[{cause, key}];
    part.cause = cause;
    part.key = key;
    part.bytes += bytes;
    ++part.blocks;
  }

  const Allocator& allocator_;
  const std::function<void(const BlockInfo&)>& on_live_;
  const std::function<void(const FreePiece&)>& on_free_;
  RegionInfo region_;
  bool open_ = false;
  std::vector<BlockInfo> blocks_;
  Bytes reserved_, in_use_, requested_;
  std::string rounding_cause_ = "rounding";
  // Ordered by (cause, key): the order of equal-sized parts never depends on a hash.
  std::map<std::pair<std::string, std::string>, ReservedPart> parts_;
  std::vector<CachedBlock> free_;
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
  ReservedVisitor v(a, on_live, on_free);
  a.WalkMemoryMap(v);
  return v.Finish(largest_free);
}

Bytes ReservedBytesByWalk(const Allocator& a) {
  ReservedBytesVisitor v;
  a.WalkMemoryMap(v);
  return v.reserved;
}

}  // namespace hbmsim::allocator
