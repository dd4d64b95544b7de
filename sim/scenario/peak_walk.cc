#include "sim/scenario/peak_walk.h"

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sim/report/user_frames.h"
#include "sim/scenario/scenario_run.h"

namespace hbmsim::sim {

absl::Status WalkPassedOverPeak(const Scenario& scenario, const AllocatorConfig& config, Bytes limit,
                                const ReplayOptions& options, ReservedExplainer& explainer) {
  const std::optional<EventIndex> peak = explainer.PeakToWalkAgain();
  if (!peak) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<ScenarioRun>> run = ScenarioRun::Prepare(scenario, config, limit, options);
  if (!run.ok()) return run.status();
  ReservedExplainer again((*run)->policy(), TopUserFrames((*run)->reader()), ReservedExplainer::OnlyPeakAt{*peak});
  (*run)->engine().AddObserver(&again);
  absl::StatusOr<ReplaySummary> summary = (*run)->Run();
  if (!summary.ok()) return summary.status();
  again.Finish(EventIndex(summary->events_read > 0 ? summary->events_read - 1 : 0));
  if (!again.peak()) {
    return absl::InternalError(
        fmt::format("the second replay for reserved at its peak did not reach the peak at event {}", peak->value()));
  }
  explainer.AdoptPeak(*again.peak());
  return absl::OkStatus();
}

}  // namespace hbmsim::sim
