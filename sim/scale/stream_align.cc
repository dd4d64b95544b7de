#include "sim/scale/stream_align.h"

#include <algorithm>
#include <deque>
#include <map>
#include <utility>

#include "sim/scale/member_stream.h"

namespace hbmsim::sim::scale {
namespace {

// V[k] of Myers' algorithm for k in [-limit, limit], and the copy of it kept
// before each round, for the walk back.
class Frontier {
 public:
  explicit Frontier(int limit) : offset_(limit + 1), v_(2 * static_cast<size_t>(limit) + 3, 0) {}
  int& at(int k) { return v_[static_cast<size_t>(k + offset_)]; }
  // The entries a round d reads: k in [-d-1, d+1].
  std::vector<int> Window(int d) const {
    return std::vector<int>(v_.begin() + (offset_ - d - 1), v_.begin() + (offset_ + d + 2));
  }

 private:
  int offset_;
  std::vector<int> v_;
};

bool StepsDown(const std::vector<int>& w, int d, int k) {
  auto at = [&](int kk) { return w[static_cast<size_t>(kk + d + 1)]; };
  return k == -d || (k != d && at(k - 1) < at(k + 1));
}

// Matches a[i] with b[j] along the shortest edit script; false when it is
// longer than kMaxEdits.
bool Myers(std::span<const uint64_t> a, std::span<const uint64_t> b, std::vector<uint32_t>& other_of,
           uint32_t a_base, uint32_t b_base) {
  const int n = static_cast<int>(a.size());
  const int m = static_cast<int>(b.size());
  const int limit = static_cast<int>(std::min<size_t>(kMaxEdits, a.size() + b.size()));
  Frontier v(limit);
  std::vector<std::vector<int>> rounds;  // rounds[d]: V before round d
  int found = -1;
  for (int d = 0; d <= limit && found < 0; ++d) {
    rounds.push_back(v.Window(d));
    for (int k = -d; k <= d; k += 2) {
      int x = (k == -d || (k != d && v.at(k - 1) < v.at(k + 1))) ? v.at(k + 1) : v.at(k - 1) + 1;
      int y = x - k;
      while (x < n && y < m && a[static_cast<size_t>(x)] == b[static_cast<size_t>(y)]) ++x, ++y;
      v.at(k) = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0) return false;
  int x = n, y = m;
  for (int d = found; d >= 0; --d) {
    const std::vector<int>& w = rounds[static_cast<size_t>(d)];
    const int k = x - y;
    const int prev_k = d == 0 ? 0 : (StepsDown(w, d, k) ? k + 1 : k - 1);
    const int prev_x = d == 0 ? 0 : w[static_cast<size_t>(prev_k + d + 1)];
    const int prev_y = prev_x - prev_k;
    while (x > prev_x && y > prev_y) {
      --x, --y;
      other_of[a_base + static_cast<uint32_t>(x)] = b_base + static_cast<uint32_t>(y);
    }
    x = prev_x;
    y = prev_y;
  }
  return true;
}

}  // namespace

StepAlignment AlignSteps(std::span<const uint64_t> a, std::span<const uint64_t> b) {
  StepAlignment out;
  out.other_of.assign(a.size(), kNoStep);
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) {
    out.other_of[prefix] = static_cast<uint32_t>(prefix);
    ++prefix;
  }
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    out.other_of[a.size() - 1 - suffix] = static_cast<uint32_t>(b.size() - 1 - suffix);
    ++suffix;
  }
  const std::span<const uint64_t> mid_a = a.subspan(prefix, a.size() - prefix - suffix);
  const std::span<const uint64_t> mid_b = b.subspan(prefix, b.size() - prefix - suffix);
  if (!mid_a.empty() && !mid_b.empty()) {
    out.complete =
        Myers(mid_a, mid_b, out.other_of, static_cast<uint32_t>(prefix), static_cast<uint32_t>(prefix));
  }
  out.matched = static_cast<size_t>(
      std::count_if(out.other_of.begin(), out.other_of.end(), [](uint32_t j) { return j != kNoStep; }));
  return out;
}

namespace {

// Each template start-state alloc (and its free_requested) against the
// other's: same call and size first, then same call, first come first.
void MatchStartState(const MemberStream& t, const MemberStream& o, std::vector<uint32_t>& other_of) {
  std::map<std::pair<uint64_t, uint64_t>, std::deque<uint32_t>> by_size;  // (token, bytes) -> o steps
  std::map<uint64_t, std::deque<uint32_t>> by_call;                       // token -> o steps
  std::map<uint32_t, uint32_t> pending_of;  // o alloc -> its free_requested step
  for (uint32_t j = 0; j < o.start_steps; ++j) {
    const StreamStep& s = o.steps[j];
    if (s.kind == EventKind::kAlloc) {
      by_size[{s.token, o.alloc_bytes[s.alloc]}].push_back(j);
      by_call[s.token].push_back(j);
    } else if (s.alloc != kNoAlloc) {
      pending_of[s.alloc] = j;
    }
  }
  std::vector<bool> taken(o.start_steps, false);
  auto take = [&](std::deque<uint32_t>& q) -> uint32_t {
    while (!q.empty() && taken[q.front()]) q.pop_front();
    if (q.empty()) return kNoStep;
    taken[q.front()] = true;
    return q.front();
  };
  std::vector<uint32_t> alloc_match(t.allocs(), kNoStep);
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t i = 0; i < t.start_steps; ++i) {
      const StreamStep& s = t.steps[i];
      if (s.kind != EventKind::kAlloc || other_of[i] != kNoStep) continue;
      const uint32_t j =
          pass == 0 ? take(by_size[{s.token, t.alloc_bytes[s.alloc]}]) : take(by_call[s.token]);
      if (j != kNoStep) other_of[i] = j;
    }
  }
  for (uint32_t i = 0; i < t.start_steps; ++i) {  // a pending block's free_requested with its block
    const StreamStep& s = t.steps[i];
    if (s.kind == EventKind::kAlloc || s.alloc == kNoAlloc) continue;
    const uint32_t j = other_of[t.alloc_steps[s.alloc]];
    if (j == kNoStep) continue;
    const auto it = pending_of.find(o.steps[j].alloc);
    if (it != pending_of.end()) other_of[i] = it->second;
  }
}

// The trace after the start state, by tokens.
StepAlignment AlignTrace(const MemberStream& t, const MemberStream& o, bool loose) {
  const std::vector<uint64_t> a = StepTokens(t, loose), b = StepTokens(o, loose);
  StepAlignment part = AlignSteps(std::span(a).subspan(t.start_steps), std::span(b).subspan(o.start_steps));
  StepAlignment out{std::vector<uint32_t>(t.start_steps, kNoStep), part.matched, part.complete};
  for (uint32_t j : part.other_of) out.other_of.push_back(j == kNoStep ? kNoStep : j + o.start_steps);
  return out;
}

}  // namespace

MemberSteps AlignMemberSteps(const MemberStream& templ, const MemberStream& other) {
  MemberSteps out{AlignTrace(templ, other, false), false};
  const size_t most =
      std::min(templ.steps.size() - templ.start_steps, other.steps.size() - other.start_steps);
  if (out.steps.matched != most) {
    StepAlignment loose = AlignTrace(templ, other, true);
    if (loose.matched > out.steps.matched) out = MemberSteps{std::move(loose), true};
  }
  MatchStartState(templ, other, out.steps.other_of);
  out.steps.matched = static_cast<size_t>(std::count_if(out.steps.other_of.begin(), out.steps.other_of.end(),
                                                        [](uint32_t j) { return j != kNoStep; }));
  return out;
}

}  // namespace hbmsim::sim::scale
