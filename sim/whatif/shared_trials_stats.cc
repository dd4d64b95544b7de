#include "sim/whatif/shared_trials_stats.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace hbmsim::sim {
namespace {

const auto kProgramStartTime = std::chrono::steady_clock::now();

bool PrintsSharedTrialsStats() { return std::getenv("HBMSIM_SHARED_TRIALS_STATS") != nullptr; }

unsigned long long Ull(uint64_t v) { return static_cast<unsigned long long>(v); }

}  // namespace

double SharedTrialsStats::MsSinceStart() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - kProgramStartTime).count();
}

void SharedTrialsStats::Finished(const TrialSpan& span, const TrialEnd& end) {
  if (PrintsSharedTrialsStats()) {
    std::fprintf(stderr, "  trial %llu: from %llu to %llu, %s%s, window [%llu, %llu], from +%.0f to +%.0f ms\n",
                 Ull(span.limit.value()), Ull(span.start), Ull(span.end), end.fails ? "fails" : "fits",
                 end.met ? " (met a finished trial)" : "", Ull(end.window.lo.value()), Ull(end.window.hi.value()),
                 span.began_ms, MsSinceStart());
  }
  ++trials_;
  if (end.resumed) ++resumed_;
  events_replayed_ += span.end - span.start;
}

void SharedTrialsStats::CalledOff(const TrialSpan& span) {
  events_called_off_ += span.end - span.start;
  if (!PrintsSharedTrialsStats()) return;
  std::fprintf(stderr, "  trial %llu: from %llu to %llu, called off, from +%.0f to +%.0f ms\n",
               Ull(span.limit.value()), Ull(span.start), Ull(span.end), span.began_ms, MsSinceStart());
}

void SharedTrialsStats::PrintSummary(uint64_t events, uint64_t met) const {
  if (!PrintsSharedTrialsStats()) return;
  std::fprintf(stderr,
               "shared trials: %llu events, %llu trials (%llu resumed, %llu met a finished one), %llu events "
               "replayed (%.2f full replays), %llu more by trials called off\n",
               Ull(events), Ull(trials_), Ull(resumed_), Ull(met), Ull(events_replayed_),
               events == 0 ? 0.0 : static_cast<double>(events_replayed_) / static_cast<double>(events),
               Ull(events_called_off_));
}

}  // namespace hbmsim::sim
