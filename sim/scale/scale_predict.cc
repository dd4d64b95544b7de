#include "sim/scale/scale_predict.h"

#include "fmt/format.h"

namespace hbmsim::sim::scale {

absl::StatusOr<std::vector<std::shared_ptr<const MemberStream>>> OpenMembers(
    const std::vector<MemberInput>& inputs, const ScenarioRequest& request) {
  std::vector<std::shared_ptr<const MemberStream>> out;
  for (const MemberInput& in : inputs) {
    absl::StatusOr<Scenario> scenario = OpenScenario(in.path, request);
    if (!scenario.ok()) return scenario.status();
    if (scenario->recording->facts().state_only) {
      return absl::InvalidArgumentError(
          fmt::format("{}: holds an allocator state and no trace; scale needs the recorded events", in.path));
    }
    absl::StatusOr<MemberStream> stream =
        ReadMemberStream(std::make_shared<const Scenario>(*std::move(scenario)), in.value, in.path);
    if (!stream.ok()) return stream.status();
    if (stream->allocs() == 0)
      return absl::InvalidArgumentError(fmt::format("{}: no allocations to scale", in.path));
    out.push_back(std::make_shared<const MemberStream>(*std::move(stream)));
  }
  return out;
}

absl::StatusOr<Prediction> PredictAt(const ScaleModel& model, const AllocatorConfig& config,
                                     std::string_view limit_flag, uint64_t n,
                                     const ScaleRunOptions& options) {
  Prediction out;
  out.to = n;
  out.alloc_bytes = PredictAllocSizes(model, n, &out.unextended);
  absl::StatusOr<PredictedScenario> predicted =
      MakePredictedScenario(model.templ_ptr(), out.alloc_bytes, fmt::format("the prediction at {}", n),
                            model.start_states_nested && model.templ().value <= n);
  if (!predicted.ok()) return predicted.status();
  out.predicted = *std::move(predicted);
  absl::StatusOr<LimitChoice> limit = ResolveLimit(out.predicted.scenario, config, limit_flag);
  if (!limit.ok()) return limit.status();
  out.limit = *limit;
  absl::StatusOr<ScaleRunResult> run = RunForScale(out.predicted.scenario, config, limit->limit, options);
  if (!run.ok()) return run.status();
  out.run = *std::move(run);
  return out;
}

absl::StatusOr<ScaleRunResult> ReplayMember(const MemberStream& member, const AllocatorConfig& config,
                                            std::string_view limit_flag) {
  absl::StatusOr<LimitChoice> limit = ResolveLimit(*member.scenario, config, limit_flag);
  if (!limit.ok()) return limit.status();
  return RunForScale(*member.scenario, config, limit->limit, ScaleRunOptions{});
}

}  // namespace hbmsim::sim::scale
