#include "sim/viz/address_map.h"

#include <algorithm>
#include <array>

namespace hbmsim::sim::viz {
namespace {

bool Held(BlockState s) { return s == BlockState::kInUse || s == BlockState::kPendingFree; }

// Two passes over the walk: the first sums the bytes (to scale units), the
// second places the blocks. Neither stores blocks.
class TotalVisitor : public MemoryMapVisitor {
 public:
  void OnRegion(const RegionInfo& r) override { total += r.size.value(); }
  void OnBlock(const BlockInfo&) override {}
  uint64_t total = 0;
};

class CellVisitor : public MemoryMapVisitor {
 public:
  CellVisitor(AddressMap& map, uint64_t total) : map_(map), total_(std::max<uint64_t>(total, 1)) {}

  void OnRegion(const RegionInfo& r) override {
    Flush();
    ++map_.regions;
    map_.region_starts.push_back(Unit(seen_));
  }

  void OnBlock(const BlockInfo& b) override {
    const uint64_t size = b.size.value();
    const uint64_t waste = Held(b.state) ? b.size.SaturatingSub(b.requested).value() : 0;
    ++map_.blocks;
    if (b.state == BlockState::kFree) {
      map_.free_bytes += size;
      map_.largest_free = std::max(map_.largest_free, size);
    }
    map_.waste_bytes += waste;
    const uint64_t begin = Unit(seen_);
    seen_ += size;
    const uint64_t end = Unit(seen_);
    if (end - begin >= 1) {
      Flush();
      map_.cells.push_back({begin, end, b.state, size, waste, 1, b.offset.value()});
      return;
    }
    // Narrower than a unit: joins the pending aggregate.
    if (pending_.blocks == 0) pending_ = {begin, begin, b.state, 0, 0, 0, b.offset.value()};
    pending_.bytes += size;
    pending_.waste += waste;
    ++pending_.blocks;
    by_state_[static_cast<int>(b.state)] += size;
    if (Unit(seen_) > pending_.begin) Flush();
  }

  void Flush() {
    if (pending_.blocks == 0) return;
    pending_.end = std::max(Unit(seen_), pending_.begin + 1);
    const auto most = std::max_element(by_state_.begin(), by_state_.end());
    pending_.state = static_cast<BlockState>(most - by_state_.begin());
    map_.cells.push_back(pending_);
    pending_ = {};
    by_state_ = {};
  }

 private:
  uint64_t Unit(uint64_t bytes) const {
    return static_cast<uint64_t>(static_cast<long double>(bytes) * AddressMap::kUnits / total_);
  }

  AddressMap& map_;
  uint64_t total_;
  uint64_t seen_ = 0;
  MapCell pending_;
  std::array<uint64_t, 5> by_state_{};
};

}  // namespace

AddressMap TakeAddressMap(const Allocator& a, uint64_t event, std::string title) {
  AddressMap map;
  map.taken = true;
  map.event = event;
  map.title = std::move(title);
  TotalVisitor total;
  a.WalkMemoryMap(total);
  map.total_bytes = total.total;
  CellVisitor cells(map, total.total);
  a.WalkMemoryMap(cells);
  cells.Flush();
  return map;
}

}  // namespace hbmsim::sim::viz
