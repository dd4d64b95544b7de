#include "sim/whatif/reconvergence.h"

#include <algorithm>
#include <utility>

namespace hbmsim::sim {

namespace {

LimitWindow Intersect(const LimitWindow& a, const LimitWindow& b) {
  LimitWindow w = a;
  w.AtLeast(b.lo);
  w.AtMost(b.hi);
  return w;  // may be empty (lo > hi): then it holds no limit
}

}  // namespace

void TrackRecorder::Mark(uint64_t event, const StateFingerprint& fingerprint, const LimitWindow& since_last) {
  // The decisions before the first mark belong to no mark's future.
  if (!marks_.empty()) after_.push_back(since_last);
  marks_.push_back(TrialTrack::Mark{event, fingerprint, LimitWindow{}});
}

std::shared_ptr<const TrialTrack> TrackRecorder::Finish(const LimitWindow& since_last, bool fits) {
  if (marks_.empty()) return nullptr;
  after_.push_back(since_last);
  // ahead(k) = after(k) ∩ ahead(k + 1), from the last mark back.
  LimitWindow ahead;
  for (size_t k = marks_.size(); k-- > 0;) {
    ahead = Intersect(after_[k], ahead);
    marks_[k].ahead = ahead;
  }
  auto track = std::make_shared<TrialTrack>();
  track->marks = std::move(marks_);
  track->fits = fits;
  marks_.clear();
  after_.clear();
  return track;
}

bool TrialMarker::AtPoint(uint64_t i) {
  const uint64_t allowed = (i - start_ + stride_) / kEventsPerFingerprintPart - fingerprint_work_;
  const std::optional<StateFingerprint> fingerprint = policy_.Fingerprint(allowed);
  if (!fingerprint) return true;
  fingerprint_work_ += allowed;  // an upper bound of the parts walked: simple, and cheap enough
  track_.Mark(i, *fingerprint, policy_.TakeRecentWindow());
  if (verdict_only_) met_ = finished_.Meet(i, *fingerprint, limit_);
  return !met_.has_value();
}

std::shared_ptr<const TrialTrack> TrialMarker::Finish(bool fits) {
  return track_.Finish(policy_.TakeRecentWindow(), fits);
}

void TrialTracks::Add(std::shared_ptr<const TrialTrack> track) {
  if (!track) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (tracks_.size() >= kMaxTracks) tracks_.erase(tracks_.begin());  // the oldest
  tracks_.push_back(std::move(track));
}

std::optional<bool> TrialTracks::Meet(uint64_t event, const StateFingerprint& fingerprint, Bytes limit) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::shared_ptr<const TrialTrack>& t : tracks_) {
    const auto m = std::lower_bound(t->marks.begin(), t->marks.end(), event,
                                    [](const TrialTrack::Mark& mark, uint64_t e) { return mark.event < e; });
    if (m == t->marks.end() || m->event != event) continue;
    if (m->fingerprint == fingerprint && m->ahead.Contains(limit)) {
      ++met_;
      return t->fits;
    }
  }
  return std::nullopt;
}

uint64_t TrialTracks::met() const {
  std::lock_guard<std::mutex> lock(mu_);
  return met_;
}

}  // namespace hbmsim::sim
