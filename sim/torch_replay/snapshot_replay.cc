#include "sim/torch_replay/snapshot_replay.h"

#include <utility>

namespace hbmsim {

absl::StatusOr<std::unique_ptr<SnapshotReplay>> SnapshotReplay::Open(const std::string& path,
                                                                     std::optional<DeviceId> device) {
  absl::StatusOr<std::unique_ptr<SnapshotEventReader>> reader = SnapshotEventReader::OpenDevice(path, device);
  if (!reader.ok()) return reader.status();
  auto replay = std::unique_ptr<SnapshotReplay>(new SnapshotReplay());
  replay->reader_ = *std::move(reader);
  replay->device_ = replay->reader_->device(0);
  replay->oom_capacity_ = replay->reader_->CapacityAtFirstOom(0);
  return replay;
}

absl::StatusOr<Allocator*> SnapshotReplay::Prepare(Allocator& built) {
  torch_ = dynamic_cast<torch::TorchAllocator*>(&built);
  checker_ = std::make_unique<SnapshotChecker>(*reader_, torch_);
  if (torch_ == nullptr) return &built;
  seeded_ = std::make_unique<SeededTorch>(*torch_);
  if (absl::Status s = seeded_->Seed(*reader_, 0); !s.ok()) return s;
  return seeded_.get();
}

void SnapshotReplay::Finish(ReplaySummary& summary) const {
  if (checker_) summary.recorded = checker_->Check();
}

}  // namespace hbmsim
