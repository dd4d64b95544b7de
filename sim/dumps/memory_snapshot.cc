#include "sim/dumps/memory_snapshot.h"

namespace hbmsim::sim {
namespace {

class SnapshotVisitor : public MemoryMapVisitor {
 public:
  explicit SnapshotVisitor(std::vector<RegionSnapshot>& out) : out_(out) {}
  void OnRegion(const RegionInfo& r) override { out_.push_back({r, {}}); }
  void OnBlock(const BlockInfo& b) override {
    if (!out_.empty()) out_.back().blocks.push_back(b);
  }

 private:
  std::vector<RegionSnapshot>& out_;
};

}  // namespace

std::vector<RegionSnapshot> TakeMemorySnapshot(const Allocator& a) {
  std::vector<RegionSnapshot> out;
  SnapshotVisitor v(out);
  a.WalkMemoryMap(v);
  return out;
}

}  // namespace hbmsim::sim
