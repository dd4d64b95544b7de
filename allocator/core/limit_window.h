// What lets `hbmsim size` share the work of its trials (sim/whatif/checkpoints.h):
// a policy that knows, after each event, the interval of limits under which
// every decision it made so far would have come out the same ("the limit
// window"), and that can hand a copy of its state as a run at another limit
// of that interval would have it.
//
// A policy consults its limit at a few places only (BFC: the size of the
// region it takes and the free tail of that region; PyTorch: whether a
// cudaMalloc fits). At each, it narrows the window to the limits that take
// the same branch. Two runs whose limits both lie in the window after event
// i have made the same decisions up to i; their states differ only by what
// the limit is and what it sizes directly (BFC: the tail's length), which
// CloneAt recomputes. A policy that cannot tell keeps the window at its own
// limit alone, and its runs are never shared.
#ifndef HBMSIM_ALLOCATOR_CORE_LIMIT_WINDOW_H_
#define HBMSIM_ALLOCATOR_CORE_LIMIT_WINDOW_H_

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "allocator/core/allocator.h"
#include "allocator/core/units.h"

namespace hbmsim::allocator {

// The closed interval [lo, hi] of limits.
struct LimitWindow {
  Bytes lo;
  Bytes hi = Bytes::Max();

  bool Contains(Bytes limit) const { return lo <= limit && limit <= hi; }
  void AtLeast(Bytes l) { lo = std::max(lo, l); }
  void AtMost(Bytes h) { hi = std::min(hi, h); }
  void Only(Bytes limit) { lo = hi = limit; }
  bool operator==(const LimitWindow&) const = default;
};

// A run's window and, apart, the window of its decisions since the last
// TakeRecent(): what a later stretch of the run needs of a limit, whatever
// came before it (SharedTrials' reconvergence, sim/whatif/checkpoints.h).
struct LimitWindows {
  LimitWindow all;
  LimitWindow recent;

  bool Contains(Bytes limit) const { return all.Contains(limit); }
  void AtLeast(Bytes l) {
    all.AtLeast(l);
    recent.AtLeast(l);
  }
  void AtMost(Bytes h) {
    all.AtMost(h);
    recent.AtMost(h);
  }
  void Only(Bytes limit) {
    all.Only(limit);
    recent.Only(limit);
  }
  LimitWindow TakeRecent() { return std::exchange(recent, LimitWindow{}); }
};

// 128 bits naming a policy's state up to its limit: two runs at different
// limits with the same fingerprint after the same events hold the same state,
// each as a run at its own limit would (BFC: the same chunks, but for the
// length of a tail the limit sizes). Collisions are left to chance (2^-128).
struct StateFingerprint {
  uint64_t a = 0;
  uint64_t b = 0;
  bool operator==(const StateFingerprint&) const = default;
};

class LimitWindowPolicy {
 public:
  virtual ~LimitWindowPolicy() = default;
  // Starts narrowing the window; called before the first event. A policy is
  // never asked outside `size`'s shared trials, so a plain replay pays nothing
  // for the bookkeeping (BFC's is a second best fit on some requests). False
  // when the policy's options keep no window: it stays the limit alone.
  virtual bool TrackLimitWindow() = 0;
  // The limits under which every decision so far was this run's; it always
  // contains the policy's own limit.
  virtual LimitWindow limit_window() const = 0;
  // The state a run at `limit` (inside limit_window()) has after the same
  // events: a policy of the same type, same handles, its window unchanged.
  virtual std::unique_ptr<Allocator> CloneAt(Bytes limit) const = 0;

  // Reconvergence, for the policies that can name their state: runs at two
  // limits that once decided apart may later hold the same state again, and
  // from there decide alike as long as both limits lie in every later
  // decision's window. Fingerprint(max_work) names the state, looking at no
  // more than max_work of its parts (BFC: chunks); nullopt when the policy
  // cannot tell (its runs never reconverge) or would look at more (a caller
  // bounds what fingerprints cost against what its replay does).
  // TakeRecentWindow() is the window of the decisions since its last call
  // (or since TrackLimitWindow), and starts a new one.
  virtual std::optional<StateFingerprint> Fingerprint(uint64_t max_work) const { return std::nullopt; }
  virtual LimitWindow TakeRecentWindow() { return LimitWindow{}; }
};

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_CORE_LIMIT_WINDOW_H_
