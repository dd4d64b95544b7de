#include "sim/torch_replay/seeded_torch.h"

#include <string>
#include <vector>

#include "fmt/format.h"

namespace hbmsim {
namespace {

BlockState SeedState(const StartBlock& b) {
  if (!b.live) return BlockState::kFree;
  return b.pending_free ? BlockState::kPendingFree : BlockState::kInUse;
}

torch::SegmentSeed ToSeed(const StartSegment& s) {
  torch::SegmentSeed seed;
  seed.base = s.address;
  seed.size = s.size;
  seed.stream = s.stream;
  seed.expandable = s.expandable;
  seed.small_pool = s.small;
  for (const StartBlock& b : s.blocks) {
    seed.blocks.push_back({b.size, b.requested, SeedState(b), BufferId(b.id)});
  }
  return seed;
}

}  // namespace

SeededTorch::SeededTorch(torch::TorchAllocator& inner) : inner_(inner) { inner_.set_observer(this); }

absl::Status SeededTorch::Seed(const SnapshotEventReader& reader, size_t device_index) {
  for (const StartSegment& seg : reader.StartSegments(device_index)) {
    absl::StatusOr<std::vector<Handle>> handles = inner_.SeedSegment(ToSeed(seg));
    if (!handles.ok()) {
      return absl::InvalidArgumentError(fmt::format("{}: initial segment at {:#x}: {}", reader.file_name(),
                                                    seg.address.value(),
                                                    std::string(handles.status().message())));
    }
    ++seeded_segments_;
    size_t next = 0;  // SeedSegment returns the live blocks in address order
    for (const StartBlock& b : seg.blocks) {
      if (!b.live) continue;
      AllocResult r;
      r.handle = (*handles)[next++];
      r.has_offset = true;
      r.offset = b.address;
      r.size = b.size;
      r.rounded = b.size;
      seeded_[b.id] = r;
      ++seeded_blocks_;
    }
  }
  return absl::OkStatus();
}

AllocResult SeededTorch::Allocate(const AllocRequest& req) {
  auto it = seeded_.find(req.id.value());
  if (it == seeded_.end()) return inner_.Allocate(req);
  const AllocResult r = it->second;
  seeded_.erase(it);
  return r;
}

}  // namespace hbmsim
