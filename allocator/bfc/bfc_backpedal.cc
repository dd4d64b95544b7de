// The optional device capacity: a sub-allocator that can refuse, REF's
// backpedal (§1.7 step 4), and the exact "largest request" under it.
//
// Without BfcOptions::device_capacity none of this runs: the simulated device
// never refuses and Extend gets what it asks for.
#include <algorithm>
#include <functional>
#include <vector>

#include "allocator/bfc/bfc_allocator.h"

namespace hbmsim::allocator {

namespace {

// REF declares kBackpedalFactor as float, so the product is single precision
// and truncated: from 562273024 this gives 506045696, where double arithmetic
// would give 506045952.
constexpr float kBackpedalFactor = 0.9f;

Bytes Backpedal(Bytes bytes) {
  const auto shrunk = static_cast<uint64_t>(static_cast<float>(bytes.value()) * kBackpedalFactor);
  const Bytes next = Bytes(shrunk).RoundUp(kGranule);
  // Below 2560 bytes rounding stops shrinking and REF would spin forever;
  // HEAD takes a granule off instead, and so do we.
  return next < bytes ? next : bytes.SaturatingSub(Bytes(kGranule));
}

// What the device answers to an Extend of `bytes` for a request of `rounded`.
struct DeviceAnswer {
  std::optional<Bytes> granted;
  int64_t refusals = 0;
};

DeviceAnswer Negotiate(const std::function<bool(Bytes)>& fits, Bytes bytes, Bytes rounded,
                       bool may_backpedal) {
  DeviceAnswer answer;
  if (fits(bytes)) {
    answer.granted = bytes;
    return answer;
  }
  ++answer.refusals;
  if (!may_backpedal) return answer;
  while (true) {
    bytes = Backpedal(bytes);
    if (bytes < rounded) return answer;
    if (fits(bytes)) {
      answer.granted = bytes;
      return answer;
    }
    ++answer.refusals;
  }
}

}  // namespace

bool BfcAllocator::DeviceCanServe(Bytes pool, Bytes bytes) const {
  return !options_.device_capacity || pool + bytes <= *options_.device_capacity;
}

// The largest request an Extend alone would serve now; without a capacity
// that is everything below the limit.
Bytes BfcAllocator::Obtainable() const {
  if (!options_.device_capacity) return Available();
  return LargestRequestUnderCapacity(/*extend_only=*/true);
}

// REF's sub-allocator call and backpedal loop; records the refusals and, for
// the pre-2024 era, that the one permitted backpedal has been spent.
std::optional<Bytes> BfcAllocator::NegotiateWithDevice(Bytes bytes, Bytes rounded) {
  const bool may_backpedal = !(options_.backpedal_once && started_backpedal_);
  const DeviceAnswer answer =
      Negotiate([this](Bytes b) { return DeviceCanServe(pool_bytes_, b); }, bytes, rounded, may_backpedal);
  device_alloc_failures_ += answer.refusals;
  if (answer.refusals > 0 && may_backpedal) started_backpedal_ = true;
  return answer.granted;
}

// Replays the allocation ladder for `rounded` on copies of the state it
// touches (curr, the backpedal flag, the pool after GC), changing nothing.
bool BfcAllocator::WouldSucceed(Bytes rounded, bool extend_only) const {
  const std::optional<allocator::FreeEntry> largest_chunk = bins_.Largest();
  if (!extend_only && largest_chunk && Bytes(largest_chunk->size) >= rounded) return true;
  Bytes curr = curr_region_allocation_bytes_;
  bool started = started_backpedal_;
  auto extend = [&](Bytes pool) {
    const Bytes available = options_.memory_limit.SaturatingSub(pool).RoundDown(kGranule);
    if (rounded > available) return false;
    while (rounded > curr) curr += curr;
    const bool may_backpedal = !(options_.backpedal_once && started);
    const DeviceAnswer answer = Negotiate([&](Bytes b) { return DeviceCanServe(pool, b); },
                                          std::min(curr, available), rounded, may_backpedal);
    if (answer.refusals > 0 && may_backpedal) started = true;
    return answer.granted.has_value();
  };
  if (extend(pool_bytes_)) return true;
  if (extend_only || !options_.garbage_collection) return false;
  const Bytes free_region_bytes = FreeRegionBytes();
  if (free_region_bytes.is_zero()) return false;
  if (rounded > options_.memory_limit.SaturatingSub(pool_bytes_) + free_region_bytes) return false;
  return extend(pool_bytes_ - free_region_bytes);
}

// Success is not monotone in the request once the device can refuse (a larger
// request doubles curr and starts backpedalling from another size), so the
// answer is searched among the values that can bound it: for each doubling of
// curr, the range top, the first size the device accepts from there (with and
// without backpedal), what lies below the limit, and the GC estimate. The
// largest request is the minimum of some of these, so it is among them; the
// first candidate, from the top, that WouldSucceed is the answer.
Bytes BfcAllocator::LargestRequestUnderCapacity(bool extend_only) const {
  std::vector<Bytes> candidates;
  const std::optional<allocator::FreeEntry> largest_chunk = bins_.Largest();
  if (largest_chunk && !extend_only) candidates.push_back(Bytes(largest_chunk->size));
  std::vector<Bytes> pools = {pool_bytes_};
  if (options_.garbage_collection && !extend_only) {
    const Bytes free_region_bytes = FreeRegionBytes();
    if (!free_region_bytes.is_zero()) {
      pools.push_back(pool_bytes_ - free_region_bytes);
      candidates.push_back(
          (options_.memory_limit.SaturatingSub(pool_bytes_) + free_region_bytes).RoundDown(kGranule));
    }
  }
  for (const Bytes pool : pools) {
    const Bytes available = options_.memory_limit.SaturatingSub(pool).RoundDown(kGranule);
    candidates.push_back(available);
    auto fits = [&](Bytes b) { return DeviceCanServe(pool, b); };
    for (Bytes top = curr_region_allocation_bytes_; !top.is_zero() && !available.is_zero(); top += top) {
      const Bytes first = std::min(top, available);
      candidates.push_back(first);
      for (bool may_backpedal : {false, true}) {
        const DeviceAnswer answer = Negotiate(fits, first, Bytes(kGranule), may_backpedal);
        if (answer.granted) candidates.push_back(*answer.granted);
      }
      if (top >= available) break;
    }
  }
  std::sort(candidates.begin(), candidates.end(), std::greater<>());
  for (const Bytes c : candidates) {
    if (!c.is_zero() && WouldSucceed(c, extend_only)) return c;
  }
  return Bytes();
}

}  // namespace hbmsim::allocator
