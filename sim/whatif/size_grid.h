// The grid `hbmsim size` searches and what it has learnt of it
// (sim/whatif/size_search.h): the candidates L0 + k·resolution, k >= 0, with
// L0 the trace's peak live bytes; which of them were tried and passed; and
// the points of each round, bracket and narrowing alike. No trial runs here:
// Search decides when to ask, this says what to ask for.
//
//   k:       0    1    2   ...   k_fail      ...      k_pass
//   limit:   L0   L0+r ...       fails                 fits    (r: resolution)
//   narrow:  [k_fail + 1, k_pass) split in quarters, one probe per boundary
#ifndef HBMSIM_SIM_WHATIF_SIZE_GRID_H_
#define HBMSIM_SIM_WHATIF_SIZE_GRID_H_

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace hbmsim::sim {

class SizeGrid {
 public:
  SizeGrid(uint64_t base, uint64_t resolution) : base_(base), resolution_(resolution) {}

  uint64_t base() const { return base_; }
  uint64_t LimitOf(uint64_t k) const { return base_ + k * resolution_; }

  // Grid indices of round `round` of the bracket phase, strictly increasing
  // and above every earlier round's: factors 1, 1.0625, 1.125, 1.25 of L0,
  // then 1.5, 2, 3, 4, then ×16 per round, up to 2^62 bytes.
  std::vector<uint64_t> BracketRound(int round);
  // The points of a narrowing round over [from, hi): quarters, ascending (a
  // short interval gives the same point twice, kept once).
  static std::vector<uint64_t> RoundPoints(uint64_t from, uint64_t hi);

  void Count(uint64_t k, bool ok) { tried_[k] = ok; }
  // Grid index -> passed; ordered, so every answer is deterministic.
  const std::map<uint64_t, bool>& tried() const { return tried_; }
  std::optional<uint64_t> SmallestPass() const;
  // The largest failure below `hi`.
  std::optional<uint64_t> LargestFailBelow(uint64_t hi) const;

 private:
  const uint64_t base_;
  const uint64_t resolution_;
  uint64_t next_k_ = 0;  // the bracket's next round starts at or above it
  std::map<uint64_t, bool> tried_;
};

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_WHATIF_SIZE_GRID_H_
