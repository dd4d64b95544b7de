#include "allocator/core/memory_map.h"

#include <optional>

#include "allocator/core/allocator.h"
#include "fmt/format.h"

namespace hbmsim::allocator {

std::string_view AllocStatusName(AllocStatus s) {
  switch (s) {
    case AllocStatus::kOk:
      return "ok";
    case AllocStatus::kOom:
      return "oom";
    case AllocStatus::kFragmentation:
      return "fragmentation";
  }
  return "?";
}

std::string_view PolicyEventKindName(PolicyEventKind k) {
  switch (k) {
    case PolicyEventKind::kRegionAdded:
      return "region_added";
    case PolicyEventKind::kRegionExtended:
      return "region_extended";
    case PolicyEventKind::kRegionReleased:
      return "region_released";
    case PolicyEventKind::kGarbageCollection:
      return "garbage_collection";
    case PolicyEventKind::kQueuedFreeWait:
      return "queued_free_wait";
    case PolicyEventKind::kDefragmentation:
      return "defragmentation";
    case PolicyEventKind::kProgramEvicted:
      return "program_evicted";
    case PolicyEventKind::kProgramReloaded:
      return "program_reloaded";
    case PolicyEventKind::kCacheFlush:
      return "cache_flush";
  }
  return "?";
}

namespace {

// Walks the map once and remembers the first inconsistency.
class TilingChecker : public MemoryMapVisitor {
 public:
  void OnRegion(const RegionInfo& r) override {
    CloseRegion();
    if (!error_.ok()) return;
    if (region_end_ && r.base < *region_end_) {
      Fail(fmt::format("region at {} overlaps or precedes the region ending at {}", r.base.value(),
                       region_end_->value()));
    }
    region_ = r;
    cursor_ = r.base;
    in_region_ = true;
  }
  void OnBlock(const BlockInfo& b) override {
    if (!error_.ok()) return;
    if (!in_region_) return Fail("block reported before any region");
    if (b.offset != cursor_) {
      return Fail(fmt::format("block at {} does not start where the previous one ends ({})", b.offset.value(),
                              cursor_.value()));
    }
    if (b.size.is_zero()) return Fail(fmt::format("empty block at {}", b.offset.value()));
    cursor_ = b.offset + b.size;
    if (b.state == BlockState::kInUse || b.state == BlockState::kPendingFree) held_ += b.size;
    if (b.state == BlockState::kProgram) programs_ += b.size;
  }
  absl::Status Finish(const AllocatorStats& stats) {
    CloseRegion();
    if (error_.ok() && static_cast<int64_t>(held_.value()) != stats.bytes_in_use) {
      Fail(fmt::format("bytes_in_use is {} but held blocks sum to {}", stats.bytes_in_use, held_.value()));
    }
    if (error_.ok() && static_cast<int64_t>(programs_.value()) != stats.bytes_reserved) {
      Fail(fmt::format("bytes_reserved is {} but program blocks sum to {}", stats.bytes_reserved,
                       programs_.value()));
    }
    return error_;
  }

 private:
  void CloseRegion() {
    if (!in_region_ || !error_.ok()) return;
    if (cursor_ != region_.base + region_.size) {
      Fail(fmt::format("blocks of the region at {} end at {}, not at its end {}", region_.base.value(),
                       cursor_.value(), (region_.base + region_.size).value()));
    }
    region_end_ = region_.base + region_.size;
    in_region_ = false;
  }
  void Fail(std::string msg) {
    if (error_.ok()) error_ = absl::InternalError(std::move(msg));
  }

  absl::Status error_;
  RegionInfo region_;
  bool in_region_ = false;
  std::optional<Offset> region_end_;
  Offset cursor_;
  Bytes held_;
  Bytes programs_;
};

}  // namespace

absl::Status CheckMemoryMapTiling(const Allocator& a) {
  TilingChecker checker;
  a.WalkMemoryMap(checker);
  return checker.Finish(a.GetStats());
}

}  // namespace hbmsim::allocator
