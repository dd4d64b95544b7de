#include "trace/xplane/region_doubling.h"

#include <algorithm>


namespace hbmsim::trace::xplane {
namespace {

constexpr int64_t kDoublingCap = int64_t{1} << 62;  // no device has more; hostile sums saturate here
// The searches are bounded: a hostile file must not make them run long.
constexpr int kCompletionNodes = 20000;
constexpr int kMaxDoublingsTried = 8;
constexpr int kMaxLayoutsTried = 2000;

// The next current size after a region of `s` bytes, or nullopt when Extend
// cannot make it now (reference §1.7; the header's rule).
std::optional<int64_t> AfterRegion(int64_t curr, int64_t s) {
  if (s < curr) return std::nullopt;
  if (s == curr) return std::min(kDoublingCap, 2 * s);
  int64_t c = curr;
  while (c < s && c < kDoublingCap) c *= 2;
  if (c != s) return std::nullopt;
  return s;
}

// The smallest first·2^k that holds `bytes`.
int64_t DoublingSizeHolding(int64_t bytes, int64_t first) {
  int64_t size = first;
  while (size < bytes && size < kDoublingCap) size *= 2;
  return size;
}

std::vector<int64_t> SetBitRegions(int64_t rest, int64_t first) {
  std::vector<int64_t> out;
  for (int64_t size = first; size > 0 && size <= rest && size < kDoublingCap; size *= 2) {
    if ((rest / first) & (size / first)) out.push_back(size);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// Depth-first over the sequence smallest first: the next region is the next
// taken one or a free one no larger; keeps the completion with fewest regions.
class CompletionSearch {
 public:
  CompletionSearch(std::vector<int64_t> taken, int64_t first) : taken_(std::move(taken)), first_(first) {
    std::sort(taken_.begin(), taken_.end());
  }

  std::optional<std::vector<int64_t>> Run(int64_t rest) {
    Visit(0, first_, rest);
    return best_;
  }

 private:
  void Visit(size_t i, int64_t curr, int64_t rest) {
    if (--nodes_left_ < 0) return;
    if (best_ && free_.size() >= best_->size() && !(i == taken_.size() && rest == 0)) return;
    if (i == taken_.size() && rest == 0) {
      if (!best_ || free_.size() < best_->size()) best_ = free_;
      return;
    }
    if (i < taken_.size()) {
      if (const std::optional<int64_t> next = AfterRegion(curr, taken_[i])) Visit(i + 1, *next, rest);
    }
    const int64_t bound = i < taken_.size() ? std::min(rest, taken_[i]) : rest;
    for (int64_t f = curr; f > 0 && f <= bound && f < kDoublingCap; f *= 2) {
      free_.push_back(f);
      Visit(i, *AfterRegion(curr, f), rest - f);
      free_.pop_back();
    }
  }

  std::vector<int64_t> taken_;
  int64_t first_;
  std::vector<int64_t> free_;
  std::optional<std::vector<int64_t>> best_;
  int nodes_left_ = kCompletionNodes;
};

// The untouched regions for one choice of placed sizes, U's rest (`left`)
// in a region of its own if that can be made, else in the smallest free one.
std::optional<std::vector<StartRegion>> UntouchedFor(const std::vector<int64_t>& placed, int64_t left,
                                                     int64_t rest, int64_t first) {
  if (left > 0) {
    std::vector<int64_t> taken = placed;
    const int64_t own = DoublingSizeHolding(left, first);
    taken.push_back(own);
    if (own <= rest) {
      if (std::optional<std::vector<int64_t>> free = CompleteByDoubling(taken, rest - own, first)) {
        std::vector<StartRegion> out = {{std::nullopt, own, left, false}};
        for (int64_t f : *free) out.push_back({std::nullopt, f, 0, false});
        return out;
      }
    }
  }
  std::optional<std::vector<int64_t>> free = CompleteByDoubling(placed, rest, first);
  if (!free) return std::nullopt;
  std::vector<StartRegion> out;
  for (int64_t f : *free) out.push_back({std::nullopt, f, 0, false});
  if (left > 0) {
    StartRegion* home = nullptr;  // the smallest that holds U's rest
    for (StartRegion& r : out) {
      if (r.size >= left && (home == nullptr || r.size < home->size)) home = &r;
    }
    if (home == nullptr) return std::nullopt;
    home->unknown_live = left;
  }
  return out;
}

// Each placed region's sizes: its own, doubled while it stays clear of the
// next region up (a region whose end is recorded keeps its size).
std::vector<std::vector<int64_t>> SizeChoices(const std::vector<StartRegion>& placed, int64_t target) {
  std::vector<std::vector<int64_t>> choices;
  for (const StartRegion& r : placed) {
    choices.push_back({r.size});
    if (r.end_recorded) continue;
    std::optional<uint64_t> next;
    for (const StartRegion& o : placed) {
      if (*o.base > *r.base && (!next || *o.base < *next)) next = o.base;
    }
    for (int64_t size = r.size * 2; size <= target && size < kDoublingCap; size *= 2) {
      if (next && static_cast<uint64_t>(size) > *next - *r.base) break;
      choices.back().push_back(size);
    }
  }
  return choices;
}

// Every way to spend exactly `doublings` doublings over the regions from `i` on.
class DoublingEnumerator {
 public:
  DoublingEnumerator(const std::vector<std::vector<int64_t>>& choices, int64_t left, int64_t target,
                     int64_t first)
      : choices_(choices), left_(left), target_(target), first_(first), pick_(choices.size(), 0) {}

  std::optional<DoublingLayout> Spend(size_t i, int doublings) {
    if (tried_ >= kMaxLayoutsTried) return std::nullopt;
    if (i == choices_.size()) return doublings == 0 ? Try() : std::nullopt;
    for (int j = 0; j <= doublings && static_cast<size_t>(j) < choices_[i].size(); ++j) {
      pick_[i] = j;
      if (std::optional<DoublingLayout> l = Spend(i + 1, doublings - j)) return l;
    }
    return std::nullopt;
  }

 private:
  std::optional<DoublingLayout> Try() {
    ++tried_;
    DoublingLayout l;
    int64_t sum = 0;
    for (size_t i = 0; i < choices_.size(); ++i) {
      l.placed_sizes.push_back(choices_[i][pick_[i]]);
      sum = std::min(kDoublingCap, sum + l.placed_sizes.back());
      l.doublings += pick_[i];
    }
    if (sum > target_) return std::nullopt;
    std::optional<std::vector<StartRegion>> untouched =
        UntouchedFor(l.placed_sizes, left_, target_ - sum, first_);
    if (!untouched) return std::nullopt;
    l.untouched = std::move(*untouched);
    return l;
  }

  const std::vector<std::vector<int64_t>>& choices_;
  int64_t left_;
  int64_t target_;
  int64_t first_;
  std::vector<int> pick_;
  int tried_ = 0;
};

}  // namespace

bool MadeByDoubling(std::vector<int64_t> sizes, int64_t first) {
  std::sort(sizes.begin(), sizes.end());
  int64_t curr = first;
  for (int64_t s : sizes) {
    const std::optional<int64_t> next = AfterRegion(curr, s);
    if (!next) return false;
    curr = *next;
  }
  return true;
}

std::optional<std::vector<int64_t>> CompleteByDoubling(const std::vector<int64_t>& taken, int64_t rest,
                                                       int64_t first) {
  if (first <= 0 || rest < 0 || rest % first != 0) return std::nullopt;
  std::vector<int64_t> bits = SetBitRegions(rest, first);
  std::vector<int64_t> all = taken;
  all.insert(all.end(), bits.begin(), bits.end());
  if (MadeByDoubling(all, first)) return bits;
  std::optional<std::vector<int64_t>> found = CompletionSearch(taken, first).Run(rest);
  if (found) std::sort(found->rbegin(), found->rend());
  return found;
}

std::optional<DoublingLayout> LayOutByDoubling(const std::vector<StartRegion>& placed, int64_t left,
                                               int64_t target, int64_t first) {
  const std::vector<std::vector<int64_t>> choices = SizeChoices(placed, target);
  DoublingEnumerator enumerate(choices, left, target, first);
  for (int doublings = 0; doublings <= kMaxDoublingsTried; ++doublings) {
    if (std::optional<DoublingLayout> l = enumerate.Spend(0, doublings)) return l;
  }
  return std::nullopt;
}

}  // namespace hbmsim::trace::xplane
