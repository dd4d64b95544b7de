// A small, fully predictable Allocator for the engine and report tests, so they
// do not depend on any real policy: one region of `limit` bytes, requests
// rounded up to 256, first fit by address, free neighbours merged. A failure is
// classified with ClassifyFailure like every policy does.
#ifndef HBMSIM_TESTS_SIM_FAKE_ALLOCATOR_H_
#define HBMSIM_TESTS_SIM_FAKE_ALLOCATOR_H_

#include <iterator>
#include <map>
#include <vector>

#include "allocator/core/allocator.h"
#include "sim/all_layers.h"

namespace hbmsim::testing {

class FakeAllocator : public Allocator {
 public:
  explicit FakeAllocator(Bytes limit) : limit_(limit) { blocks_[0] = Block{limit.value(), false, 0, 0}; }

  std::string_view name() const override { return "fake"; }

  AllocResult Allocate(const AllocRequest& req) override {
    AllocResult r;
    r.rounded = req.bytes.RoundUp(256);
    if (req.bytes.is_zero()) {
      r.handle = kNullHandle;
      return r;
    }
    for (auto& [start, b] : blocks_) {
      if (b.used || b.size < r.rounded.value()) continue;
      if (b.size > r.rounded.value()) {
        blocks_[start + r.rounded.value()] = Block{b.size - r.rounded.value(), false, 0, 0};
        b.size = r.rounded.value();
      }
      b.used = true;
      b.requested = req.bytes.value();
      b.id = req.id.value();
      in_use_ += b.size;
      ++stats_.num_allocs;
      stats_.peak_bytes_in_use = std::max<int64_t>(stats_.peak_bytes_in_use, in_use_);
      stats_.largest_alloc_size = std::max<int64_t>(stats_.largest_alloc_size, b.size);
      if (start == 0) Notify({PolicyEventKind::kRegionAdded, Bytes(b.size), Offset(0), 7});
      r.handle = Handle(start);
      r.has_offset = true;
      r.offset = Offset(start);
      r.size = Bytes(b.size);
      return r;
    }
    r.free_bytes = Bytes(limit_.value() - in_use_);
    r.largest_free_block = Bytes(LargestFree());
    r.status = ClassifyFailure(r.rounded, r.free_bytes);
    return r;
  }

  void Free(Handle h) override {
    if (h == kNullHandle) return;
    auto it = blocks_.find(h.value());
    it->second.used = false;
    in_use_ -= it->second.size;
    ++frees;
    auto next = std::next(it);
    if (next != blocks_.end() && !next->second.used) {
      it->second.size += next->second.size;
      blocks_.erase(next);
    }
    if (it != blocks_.begin() && !std::prev(it)->second.used) {
      std::prev(it)->second.size += it->second.size;
      blocks_.erase(it);
    }
  }

  void RequestFree(Handle h) override { ++requested_frees; }

  void ClearStats() override {
    stats_.bytes_in_use = in_use_;
    stats_.Clear();
  }
  AllocatorStats GetStats() const override {
    AllocatorStats s = stats_;
    s.bytes_in_use = in_use_;
    s.bytes_limit = limit_.value();
    s.largest_free_block_bytes = LargestFree();
    s.pool_bytes = limit_.value();
    s.peak_pool_bytes = limit_.value();
    return s;
  }

  void AppendCounters(Counters& out) const override { out.push_back({"fake_frees", frees}); }

  void WalkMemoryMap(MemoryMapVisitor& v) const override {
    v.OnRegion({Offset(0), limit_, 0});
    for (const auto& [start, b] : blocks_) {
      BlockInfo info;
      info.offset = Offset(start);
      info.size = Bytes(b.size);
      info.requested = Bytes(b.requested);
      info.state = b.used ? BlockState::kInUse : BlockState::kFree;
      info.id = b.id;
      v.OnBlock(info);
    }
  }

  absl::Status CheckInvariants() const override {
    if (break_invariants) return absl::InternalError("blocks overlap at 0x100");
    return CheckMemoryMapTiling(*this);
  }

  bool break_invariants = false;
  int64_t frees = 0;
  int64_t requested_frees = 0;

 private:
  struct Block {
    uint64_t size = 0;
    bool used = false;
    uint64_t requested = 0;
    uint64_t id = 0;
  };
  int64_t LargestFree() const {
    uint64_t best = 0;
    for (const auto& [start, b] : blocks_) {
      if (!b.used) best = std::max(best, b.size);
    }
    return static_cast<int64_t>(best);
  }

  Bytes limit_;
  std::map<uint64_t, Block> blocks_;
  int64_t in_use_ = 0;
  AllocatorStats stats_;
};

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_SIM_FAKE_ALLOCATOR_H_
