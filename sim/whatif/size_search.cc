#include "sim/whatif/size_search.h"

#include <algorithm>
#include <map>

#include "sim/whatif/checkpoints.h"
#include "sim/whatif/thread_pool.h"

namespace hbmsim {
namespace {

// Grid points beyond this are not tried: 2^62 bytes is past any device.
constexpr uint64_t kCap = uint64_t{1} << 62;
// A narrowing round splits the open interval into this many parts.
constexpr uint64_t kNarrowParts = 4;

class Search {
 public:
  Search(const TrialTarget& target, const SizeOptions& options)
      : target_(target), options_(options), base_(target.survey.peak_live_bytes.value()),
        shared_(options.share_trials ? SharedTrials::Make(target) : nullptr),
        queue_(options.jobs, [this](uint64_t k) { return Trial(Bytes(LimitOf(k))); }) {}

  absl::StatusOr<SizeResult> Run() {
    SizeResult out;
    out.peak_live_bytes = target_.survey.peak_live_bytes;
    std::optional<uint64_t> pass;
    for (int round = 0; !pass; ++round) {
      const std::vector<uint64_t> ks = BracketRound(round);
      if (ks.empty()) break;  // past the cap: nothing fits
      if (absl::Status s = Probe(ks); !s.ok()) return s;
      pass = SmallestPass();
    }
    if (!pass) return Finish(out);
    while (true) {
      if (absl::Status s = Narrow(); !s.ok()) return s;
      // The two grid points below the answer, where not tried yet: a policy
      // that is not monotonic may pass there although the one above failed.
      const uint64_t hi = *SmallestPass();
      std::vector<uint64_t> below;
      for (uint64_t k = hi >= 2 ? hi - 2 : 0; k < hi; ++k) {
        if (!tried_.contains(k)) below.push_back(k);
      }
      if (below.empty()) break;
      if (absl::Status s = Probe(below); !s.ok()) return s;
    }
    return Verify(out);
  }

 private:
  // Each round's points depend only on the smallest pass and the largest
  // failure below it, so a round starts as soon as those are known: once
  // every probe still running lies above a known pass (which it can then
  // neither lower nor bound from below). The probes made are the same as
  // when every round waits for all of its own; only the waiting is shorter.
  absl::Status Narrow() {
    while (true) {
      if (absl::Status s = AwaitUntil([&] { return OnlyAboveSmallestPass(); }); !s.ok()) return s;
      const uint64_t hi = *SmallestPass();
      const std::optional<uint64_t> lo = LargestFailBelow(hi);
      const uint64_t from = lo ? *lo + 1 : 0;
      if (from >= hi) return AwaitUntil([&] { return queue_.outstanding().empty(); });
      // Every later probe lies in [min(from, hi - 2), hi + 3] (narrowing, the
      // two below the answer, the verify window).
      if (shared_) shared_->KeepFor(Bytes(LimitOf(std::min(from, hi >= 2 ? hi - 2 : 0))), Bytes(LimitOf(hi + 3)));
      std::vector<uint64_t> ks;
      for (uint64_t q = 1; q < kNarrowParts; ++q) {
        const uint64_t k = from + (hi - from) * q / kNarrowParts;
        if (ks.empty() || ks.back() != k) ks.push_back(k);  // a short interval gives the same point twice
      }
      for (const uint64_t k : ks) queue_.Submit(k);
    }
  }

  bool OnlyAboveSmallestPass() const {
    const std::optional<uint64_t> pass = SmallestPass();
    return pass && (queue_.outstanding().empty() || *queue_.outstanding().begin() > *pass);
  }

  // Collects finished probes until `done()`; the first failed trial's error.
  template <typename Done>
  absl::Status AwaitUntil(Done done) {
    while (!done()) {
      for (auto& [k, r] : queue_.Finished()) {
        if (!r.ok()) return r.status();
        tried_[k] = r->ok();
      }
    }
    return absl::OkStatus();
  }

  // A probe: shared with the others where it can be (sim/whatif/checkpoints.h:
  // the same TrialResult), else a trial of its own.
  absl::StatusOr<TrialResult> Trial(Bytes limit) {
    return shared_ ? shared_->Run(limit, TrialOptions{}) : RunTrial(target_, limit, TrialOptions{});
  }

  uint64_t LimitOf(uint64_t k) const { return base_ + k * options_.resolution; }

  // Grid indices of round `round` of the bracket phase, strictly increasing.
  std::vector<uint64_t> BracketRound(int round) {
    static constexpr double kFactors[2][4] = {{1, 1.0625, 1.125, 1.25}, {1.5, 2, 3, 4}};
    std::vector<uint64_t> ks;
    for (int i = 0; i < 4; ++i) {
      const double f = round < 2 ? kFactors[round][i]
                                 : 4.0 * static_cast<double>(uint64_t{1} << (4 * (round - 2) + i + 1));
      const double limit = static_cast<double>(std::max<uint64_t>(base_, options_.resolution)) * f;
      if (limit >= static_cast<double>(kCap)) break;
      uint64_t k = static_cast<uint64_t>((limit - static_cast<double>(base_)) /
                                         static_cast<double>(options_.resolution));
      if (round == 0 && i == 0) k = 0;
      k = std::max(k, next_k_);
      ks.push_back(k);
      next_k_ = k + 1;
    }
    return ks;
  }

  // Runs the probes `ks` and waits for them (and any still running).
  absl::Status Probe(const std::vector<uint64_t>& ks) {
    for (const uint64_t k : ks) queue_.Submit(k);
    return AwaitUntil([&] { return queue_.outstanding().empty(); });
  }

  std::optional<uint64_t> SmallestPass() const {
    for (const auto& [k, ok] : tried_) {
      if (ok) return k;
    }
    return std::nullopt;
  }
  std::optional<uint64_t> LargestFailBelow(uint64_t hi) const {
    std::optional<uint64_t> lo;
    for (const auto& [k, ok] : tried_) {
      if (k < hi && !ok) lo = k;
    }
    return lo;
  }

  absl::StatusOr<SizeResult> Verify(SizeResult& out) {
    const uint64_t answer = *SmallestPass();
    std::vector<uint64_t> window;
    for (uint64_t k = answer + 1; k <= answer + 3; ++k) {
      if (!tried_.contains(k)) window.push_back(k);
    }
    absl::StatusOr<TrialResult> full = absl::UnknownError("not run");
    std::vector<absl::StatusOr<TrialResult>> results(window.size(), absl::UnknownError("not run"));
    ParallelFor(window.size() + 1, options_.jobs, [&](size_t i) {
      if (i == 0) {
        const TrialOptions every_event{false, {}, {}};
        full = shared_ ? shared_->RunFromStart(Bytes(LimitOf(answer)), every_event)
                       : RunTrial(target_, Bytes(LimitOf(answer)), every_event);
      } else {
        results[i - 1] = Trial(Bytes(LimitOf(window[i - 1])));
      }
    });
    if (!full.ok()) return full.status();
    if (!full->ok()) {
      return absl::InternalError("the verifying replay at the answer failed although its probe passed");
    }
    for (size_t i = 0; i < window.size(); ++i) {
      if (!results[i].ok()) return results[i].status();
      tried_[window[i]] = results[i]->ok();
    }
    out.found = true;
    out.min_bytes_limit = Bytes(LimitOf(answer));
    out.verified = *full;
    for (const auto& [k, ok] : tried_) {
      if (k > answer && !ok) {
        out.non_monotonic = Bytes(LimitOf(k));
        break;
      }
    }
    if (base_ > 0) out.overhead = static_cast<double>(LimitOf(answer)) / static_cast<double>(base_) - 1.0;
    return Finish(out);
  }

  SizeResult Finish(SizeResult& out) const {
    for (const auto& [k, ok] : tried_) out.probes.push_back({Bytes(LimitOf(k)), ok});
    out.trials_shared = shared_ != nullptr;
    return out;
  }

  const TrialTarget& target_;
  const SizeOptions options_;
  const uint64_t base_;
  uint64_t next_k_ = 0;
  std::map<uint64_t, bool> tried_;  // grid index -> passed; ordered, so results are deterministic
  const std::unique_ptr<SharedTrials> shared_;
  TaskQueue<absl::StatusOr<TrialResult>> queue_;  // last: its threads call Trial(), so they stop first
};

}  // namespace

absl::StatusOr<SizeResult> FindMinLimit(const TrialTarget& target, const SizeOptions& options) {
  return Search(target, options).Run();
}

}  // namespace hbmsim
