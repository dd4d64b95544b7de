#include "sim/scenario/seeded_allocator.h"

namespace hbmsim::sim {

SeededAllocator::SeededAllocator(Allocator& inner, const std::vector<SeededBlock>& blocks) : inner_(inner) {
  inner_.set_observer(this);
  for (const SeededBlock& b : blocks) seeded_[b.id] = b.placement;
}

AllocResult SeededAllocator::Allocate(const AllocRequest& req) {
  auto it = seeded_.find(req.id.value());
  if (it == seeded_.end()) return inner_.Allocate(req);
  const AllocResult r = it->second;
  seeded_.erase(it);
  return r;
}

}  // namespace hbmsim::sim
