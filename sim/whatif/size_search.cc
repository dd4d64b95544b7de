#include "sim/whatif/size_search.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "sim/whatif/checkpoints.h"
#include "sim/whatif/size_grid.h"
#include "sim/whatif/thread_pool.h"

namespace hbmsim::sim {
namespace {

class Search {
 public:
  Search(const TrialTarget& target, const SizeOptions& options, std::unique_ptr<SharedTrials> shared)
      : target_(target), options_(options), grid_(target.survey.peak_live_bytes.value(), options.resolution),
        shared_(shared ? std::move(shared) : options.share_trials ? SharedTrials::Make(target) : nullptr),
        queue_(options.jobs, [this](uint64_t k) { return QueuedTrial(k); }) {}

  absl::StatusOr<SizeResult> Run() {
    SizeResult out;
    out.peak_live_bytes = target_.survey.peak_live_bytes;
    std::optional<uint64_t> pass;
    for (int round = 0; !pass; ++round) {
      const std::vector<uint64_t> ks = grid_.BracketRound(round);
      if (ks.empty()) break;  // past the cap: nothing fits
      if (absl::Status s = Probe(ks); !s.ok()) return s;
      pass = grid_.SmallestPass();
    }
    if (!pass) return Finish(out);
    while (true) {
      if (absl::Status s = Narrow(); !s.ok()) return s;
      // The two grid points below the answer, where not tried yet: a policy
      // that is not monotonic may pass there although the one above failed.
      const uint64_t hi = *grid_.SmallestPass();
      std::vector<uint64_t> below;
      for (uint64_t k = hi >= 2 ? hi - 2 : 0; k < hi; ++k) {
        if (!grid_.tried().contains(k)) below.push_back(k);
      }
      if (below.empty()) break;
      if (absl::Status s = Probe(below); !s.ok()) return s;
    }
    return Complete(out);
  }

 private:
  // Each round's points depend only on the smallest pass and the largest
  // failure below it, so a round starts as soon as those are known: once
  // every probe still running lies above a known pass (which it can then
  // neither lower nor bound from below). The probes made are the same as
  // when every round waits for all of its own; only the waiting is shorter.
  absl::Status Narrow() {
    narrowing_ = true;
    while (true) {
      if (absl::Status s = AwaitUntil([&] { return OnlyAboveSmallestPass(); }); !s.ok()) return s;
      const uint64_t hi = *grid_.SmallestPass();
      const std::optional<uint64_t> lo = grid_.LargestFailBelow(hi);
      const uint64_t from = lo ? *lo + 1 : 0;
      CancelAheadOutside(from, hi);
      if (from >= hi) {
        narrowing_ = false;
        return absl::OkStatus();  // those above the answer may still run (Defer)
      }
      // Every later probe lies in [min(from, hi - 2), hi + 3] (narrowing, the
      // two below the answer, the window above it), or is one asked for and not
      // in yet, above the pass (Defer: it resumes from its own checkpoints).
      if (Resumes()) {
        const uint64_t top = queue_.outstanding().empty() ? hi : std::max(hi, *queue_.outstanding().rbegin());
        shared_->KeepFor(Bytes(grid_.LimitOf(std::min(from, hi >= 2 ? hi - 2 : 0))),
                         Bytes(grid_.LimitOf(std::max(top, hi + 3))));
      }
      for (const uint64_t k : SizeGrid::RoundPoints(from, hi)) Ask(k);
      Defer(hi);
    }
  }

  bool OnlyAboveSmallestPass() const {
    const std::optional<uint64_t> pass = grid_.SmallestPass();
    const std::optional<uint64_t> least = LeastPending();
    return pass && (!least || *least > *pass);
  }

  // Collects finished probes until `done()`; the first failed trial's error.
  template <typename Done>
  absl::Status AwaitUntil(Done done) {
    while (!done()) {
      Speculate();
      for (auto& [k, r] : queue_.Finished()) {
        ForgetFlag(k);
        if (cancelled_.erase(k) > 0) {
          // It may have finished before it saw the flag: then it counts.
          const bool wanted = wanted_again_.erase(k) > 0;
          if (r.ok()) {
            if (wanted) {
              Count(k, r->ok());
            } else {
              ahead_results_[k] = r->ok();
            }
          } else if (wanted) {
            Submit(k);
          }
          continue;
        }
        if (ahead_.erase(k) > 0) {
          // Kept for when the search asks; an error shows again then.
          if (r.ok()) ahead_results_[k] = r->ok();
          continue;
        }
        if (!r.ok()) return r.status();
        Count(k, r->ok());
      }
    }
    return absl::OkStatus();
  }

  // A probe, on the queue's threads: shared with the others where it can be
  // (sim/whatif/checkpoints.h: the same TrialResult), else a trial of its
  // own; its submission's flag may call it off.
  absl::StatusOr<TrialResult> QueuedTrial(uint64_t k) {
    std::shared_ptr<std::atomic<bool>> cancel;
    {
      std::lock_guard<std::mutex> lock(flags_mu_);
      if (auto it = flags_.find(k); it != flags_.end()) cancel = it->second;
    }
    TrialOptions options;
    options.cancel = cancel.get();
    options.verdict_only = true;  // a SizeProbe is the limit and ok()
    const Bytes limit(grid_.LimitOf(k));
    return shared_ ? shared_->Run(limit, options) : RunTrial(target_, limit, options);
  }

  // The search asks for the probe at k: from what ran ahead of it, or a new trial.
  void Ask(uint64_t k) {
    if (grid_.tried().contains(k)) return;
    if (auto it = ahead_results_.find(k); it != ahead_results_.end()) {
      Count(k, it->second);
      ahead_results_.erase(it);
    } else if (ahead_.erase(k) > 0) {
      // Running or waiting: its result now counts.
    } else if (cancelled_.contains(k)) {
      wanted_again_.insert(k);  // cancelled too soon: runs again once back
    } else if (!queue_.outstanding().contains(k)) {
      Submit(k);
    }  // else asked for already and under way
  }

  // Every submission has a flag of its own: it may be called off (Speculate,
  // Defer) and submitted again later.
  void Submit(uint64_t k) {
    {
      std::lock_guard<std::mutex> lock(flags_mu_);
      flags_[k] = std::make_shared<std::atomic<bool>>(false);
    }
    queue_.Submit(k);
  }
  void CallOff(uint64_t k) {
    std::lock_guard<std::mutex> lock(flags_mu_);
    flags_.at(k)->store(true, std::memory_order_relaxed);
    cancelled_.insert(k);
  }

  // Probes above the smallest pass only complete the record: those running
  // give their core to the round below and go back to the queue (least key
  // first, so after it), to resume later from their own checkpoints; only as
  // many as the probes waiting below the pass lack cores for, the highest
  // first. Without this a worker that finished the deciding probe took the
  // next waiting one, above the pass, before the search had queued the round.
  void Defer(uint64_t hi) {
    if (!Resumes() || options_.jobs < 2) return;
    std::vector<uint64_t> above;  // running above the pass, ascending
    size_t running = 0;
    size_t waiting_below = 0;
    for (const uint64_t k : queue_.outstanding()) {
      if (cancelled_.contains(k)) continue;  // stopping, or waiting to be told so
      if (queue_.Waiting(k)) {
        waiting_below += k < hi && !ahead_.contains(k) ? 1 : 0;
        continue;
      }
      ++running;
      if (k > hi && !ahead_.contains(k)) above.push_back(k);
    }
    const size_t idle = static_cast<size_t>(options_.jobs) - std::min(running, static_cast<size_t>(options_.jobs));
    for (size_t lack = waiting_below > idle ? waiting_below - idle : 0; lack > 0 && !above.empty(); --lack) {
      CallOff(above.back());
      wanted_again_.insert(above.back());
      above.pop_back();
    }
  }

  // Asked for and not in yet, least first.
  std::optional<uint64_t> LeastPending() const {
    for (const uint64_t k : queue_.outstanding()) {
      if (!ahead_.contains(k) && (!cancelled_.contains(k) || wanted_again_.contains(k))) return k;
    }
    return std::nullopt;
  }
  bool NothingPending() const { return !LeastPending(); }

  // Runs the probes `ks` and waits for them, and for every other one asked
  // for below the smallest pass (those above it may still run: Defer).
  absl::Status Probe(const std::vector<uint64_t>& ks) {
    for (const uint64_t k : ks) Ask(k);
    return AwaitUntil([&] { return grid_.SmallestPass() ? OnlyAboveSmallestPass() : NothingPending(); });
  }

  // Speculation. While the narrowing waits on one probe below the smallest
  // pass and a core is idle, the probes the next round will make if it
  // passes, and if it fails, run ahead of the search (alternately, least
  // first). One the search then asks for is in or under way; the others are
  // cancelled once the round they were for cannot come. The probes asked for
  // are the same as without it, so is the output; only the waiting is shorter.
  void Speculate() {
    if (!narrowing_ || !Resumes() || options_.jobs < 2) return;
    while (queue_.outstanding().size() - cancelled_.size() < static_cast<size_t>(options_.jobs)) {
      const std::optional<uint64_t> k = NextGuess();
      if (!k) return;
      ahead_.insert(*k);
      Submit(*k);
    }
  }

  std::optional<uint64_t> NextGuess() const {
    const std::optional<uint64_t> pass = grid_.SmallestPass();
    if (!pass) return std::nullopt;
    std::optional<uint64_t> blocker;
    for (const uint64_t k : queue_.outstanding()) {
      if (k >= *pass) break;
      if (ahead_.contains(k) || (cancelled_.contains(k) && !wanted_again_.contains(k))) continue;
      if (blocker) return std::nullopt;  // two or more: too many futures to guess
      blocker = k;
    }
    if (!blocker) return std::nullopt;
    const uint64_t b = *blocker;
    // b passes: the next round splits [fail below b + 1, b); b fails: [max(b, fail below pass) + 1, pass).
    const std::optional<uint64_t> fail_below_b = grid_.LargestFailBelow(b);
    const std::optional<uint64_t> fail_below_pass = grid_.LargestFailBelow(*pass);
    const std::vector<uint64_t> if_pass = SizeGrid::RoundPoints(fail_below_b ? *fail_below_b + 1 : 0, b);
    const std::vector<uint64_t> if_fail =
        SizeGrid::RoundPoints(std::max(b, fail_below_pass.value_or(0)) + 1, *pass);
    for (size_t i = 0; i < std::max(if_pass.size(), if_fail.size()); ++i) {
      for (const std::vector<uint64_t>* ks : {&if_pass, &if_fail}) {
        if (i < ks->size() && Unknown((*ks)[i])) return (*ks)[i];
      }
    }
    return std::nullopt;
  }
  // Neither tried, nor under way, nor in ahead of the search.
  bool Unknown(uint64_t k) const {
    return !grid_.tried().contains(k) && !queue_.outstanding().contains(k) && !ahead_results_.contains(k);
  }

  // Cancels what ran ahead for a round that cannot come: outside [from, hi).
  void CancelAheadOutside(uint64_t from, uint64_t hi) {
    std::vector<uint64_t> stale;
    for (const uint64_t k : ahead_) {
      if (k < from || k >= hi) stale.push_back(k);
    }
    for (const uint64_t k : stale) {
      ahead_.erase(k);
      CallOff(k);
    }
  }
  void ForgetFlag(uint64_t k) {
    std::lock_guard<std::mutex> lock(flags_mu_);
    flags_.erase(k);
  }

  // A verdict the search counts, and what it tells a progress line.
  void Count(uint64_t k, bool ok) {
    grid_.Count(k, ok);
    if (!options_.on_progress) return;
    SizeProgress p;
    p.limits_tried = grid_.tried().size();
    const std::optional<uint64_t> pass = grid_.SmallestPass();
    if (pass) p.smallest_fit = Bytes(grid_.LimitOf(*pass));
    const std::optional<uint64_t> fail = grid_.LargestFailBelow(pass ? *pass : UINT64_MAX);
    if (fail) p.largest_fail = Bytes(grid_.LimitOf(*fail));
    options_.on_progress(p);
  }

  // Probes resume from checkpoints (a probe called off keeps its work), not
  // only share the log: only then are probes deferred and run ahead.
  bool Resumes() const { return shared_ && shared_->resumes(); }

  // The window above the answer goes to the queue (whose threads may still
  // be finishing probes deferred above it) while this thread runs the
  // answer's trial to the last event, every event counted (its probe needed
  // only its verdict); then everything asked for is collected.
  absl::StatusOr<SizeResult> Complete(SizeResult& out) {
    const uint64_t answer = *grid_.SmallestPass();
    // Every probe left is needed, whatever the others find: the one with the
    // most events left first, so no core idles at the end while one long
    // probe (typically one deferred since its round) runs alone.
    if (Resumes())
      queue_.RankBy([this](uint64_t k) { return shared_->ResumeEvent(Bytes(grid_.LimitOf(k))); });
    for (uint64_t k = answer + 1; k <= answer + 3; ++k) Ask(k);
    const TrialOptions every_event{false, {}, {}};
    absl::StatusOr<TrialResult> full = shared_ ? shared_->Run(Bytes(grid_.LimitOf(answer)), every_event)
                                               : RunTrial(target_, Bytes(grid_.LimitOf(answer)), every_event);
    if (!full.ok()) return full.status();
    if (!full->ok()) {
      return absl::InternalError("the answer's trial, run to the end, failed although its probe passed");
    }
    if (absl::Status s = AwaitUntil([&] { return NothingPending(); }); !s.ok()) return s;
    out.found = true;
    out.min_bytes_limit = Bytes(grid_.LimitOf(answer));
    out.at_answer = *full;
    for (const auto& [k, ok] : grid_.tried()) {
      if (k > answer && !ok) {
        out.non_monotonic = Bytes(grid_.LimitOf(k));
        break;
      }
    }
    if (grid_.base() > 0) {
      out.overhead = static_cast<double>(grid_.LimitOf(answer)) / static_cast<double>(grid_.base()) - 1.0;
    }
    return Finish(out);
  }

  SizeResult Finish(SizeResult& out) const {
    for (const auto& [k, ok] : grid_.tried()) out.probes.push_back({Bytes(grid_.LimitOf(k)), ok});
    out.trials_shared = shared_ != nullptr;
    out.trials_resume = Resumes();
    return out;
  }

  const TrialTarget& target_;
  const SizeOptions options_;
  SizeGrid grid_;
  const std::unique_ptr<SharedTrials> shared_;
  // Speculation (Speculate()): grid indices submitted ahead of the search
  // and not asked for yet; those cancelled and not back yet (and of them, the
  // ones asked for since); results in before they were asked for.
  bool narrowing_ = false;
  std::set<uint64_t> ahead_;
  std::set<uint64_t> cancelled_;
  std::set<uint64_t> wanted_again_;
  std::map<uint64_t, bool> ahead_results_;
  std::mutex flags_mu_;  // the queue's threads read flags_
  std::map<uint64_t, std::shared_ptr<std::atomic<bool>>> flags_;
  TaskQueue<absl::StatusOr<TrialResult>> queue_;  // last: its threads call Trial(), so they stop first
};

}  // namespace

absl::StatusOr<SizeResult> FindMinLimit(const TrialTarget& target, const SizeOptions& options) {
  return Search(target, options, nullptr).Run();
}

absl::StatusOr<SizedScenario> SizeScenario(const Scenario& scenario, const AllocatorConfig& config,
                                           const SizeOptions& options) {
  const bool share = options.share_trials && SharedTrials::MayShare(scenario, config);
  std::unique_ptr<EarlyLeader> early = share && options.jobs > 1 ? EarlyLeader::Start(scenario, config) : nullptr;
  absl::StatusOr<ScenarioSurvey> survey =
      SurveyScenario(scenario, SurveyOptions{share, early ? early->log() : nullptr, options.survey_observer});
  if (!survey.ok()) return survey.status();
  absl::StatusOr<TrialTarget> target = MakeTrialTarget(scenario, config, *survey);
  if (!target.ok()) return target.status();
  // The search holds the target by reference: it moves into the result only once done.
  absl::StatusOr<SizeResult> r = Search(*target, options, early ? early->Finish(*target) : nullptr).Run();
  if (!r.ok()) return r.status();
  return SizedScenario{*std::move(target), *std::move(r)};
}

}  // namespace hbmsim::sim
