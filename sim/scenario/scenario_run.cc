#include "sim/scenario/scenario_run.h"

#include "fmt/format.h"
#include "sim/scenario/scenario_config.h"
#include "sim/scenario/intervals.h"

namespace hbmsim::sim {

ScenarioRun::~ScenarioRun() {
  // The engine observes the driven allocator, the adapter observes the policy:
  // take them down in that order.
  engine_.reset();
  seeded_.reset();
}

absl::StatusOr<LimitedFactory> MakeAllocatorMaker(const Scenario& scenario, const AllocatorConfig& config) {
  if (!config.policy->plan) {
    return LimitedFactory([config](Bytes limit) { return BuildAllocator(config, limit); });
  }
  absl::StatusOr<std::vector<BufferInterval>> intervals = ScenarioIntervals(scenario);
  if (!intervals.ok()) return intervals.status();
  return config.policy->plan(config.options, *std::move(intervals));
}

absl::StatusOr<std::unique_ptr<ScenarioRun>> ScenarioRun::Prepare(const Scenario& scenario,
                                                                  const AllocatorConfig& config, Bytes limit,
                                                                  const ReplayOptions& options) {
  absl::StatusOr<LimitedFactory> maker = MakeAllocatorMaker(scenario, config);
  if (!maker.ok()) return maker.status();
  return Prepare(scenario, config, *maker, limit, options);
}

absl::StatusOr<std::unique_ptr<ScenarioRun>> ScenarioRun::Prepare(const Scenario& scenario,
                                                                  const AllocatorConfig& config,
                                                                  const LimitedFactory& maker, Bytes limit,
                                                                  const ReplayOptions& options) {
  std::unique_ptr<ScenarioRun> run(new ScenarioRun());
  run->limit_ = limit;
  absl::StatusOr<std::unique_ptr<Allocator>> built = maker(limit);
  if (!built.ok()) return built.status();
  run->policy_ = *std::move(built);
  if (absl::Status s = run->InstallStartState(scenario, config, limit); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<EventReader>> reader = scenario.Events();
  if (!reader.ok()) return reader.status();
  run->reader_ = *std::move(reader);
  ReplayOptions engine_options = options;
  if (!engine_options.device) engine_options.device = scenario.device;
  engine_options.peak_from = scenario.start_events;
  run->side_entries_ = scenario.recording->facts().records_side_entries;
  // A runtime's own record (a snapshot, with its segment calls) replayed
  // under that runtime's model from the state it recorded: a new segment goes
  // where the runtime put it, at the recorded address of the alloc that
  // needed it, as --check-recorded places it, when that range is free. The
  // driver's addresses follow no rule a model could guess, and a best fit
  // breaks ties by address: with bases of its own, segment_alloc_free_churn_
  // 4dev's replay took other blocks, 436 segments instead of 424 and a
  // reserved peak of 6.21 GB, not 5.80. (--start-state place drops the
  // recorded state, so it places new memory as any trace's.)
  engine_options.recorded_bases = run->side_entries_ && RecordedPolicy(*scenario.recording) == config.policy &&
                                  scenario.start_mode == StartStateMode::kSeed;
  run->engine_ = std::make_unique<ReplayEngine>(run->driven(), engine_options);
  // A profile's figures are compared only when asked: each costs a walk of the memory map.
  const bool figures = options.check_recorded && scenario.recording->facts().records_figures;
  if (run->side_entries_ || figures) {
    run->checker_ =
        std::make_unique<RecordingChecker>(*run->reader_, *run->policy_, config.policy->recording);
    run->engine_->AddObserver(run->checker_.get());
    if (scenario.device)
      run->final_history_ = scenario.recording->facts().device(*scenario.device).final_history.get();
  }
  if (figures) {
    const std::optional<Bytes> peak =
        scenario.start_summary ? scenario.start_summary->peak_before : std::nullopt;
    run->checker_->EnableFigures(peak ? static_cast<int64_t>(peak->value()) : 0);
  }
  return run;
}

absl::Status ScenarioRun::InstallStartState(const Scenario& scenario, const AllocatorConfig& config,
                                            Bytes limit) {
  const RecordingHooks& hooks = config.policy->recording;
  if (scenario.start_state.empty() || scenario.start_mode != StartStateMode::kSeed || !hooks.seed) {
    return absl::OkStatus();
  }
  start_.segments = scenario.start_state.size();
  for (const StartSegment& seg : scenario.start_state) {
    start_.reserved += seg.size;
    for (const StartBlock& b : seg.blocks) {
      if (!b.live) continue;
      ++start_.live_blocks;
      if (!first_start_id_ || b.id < *first_start_id_) first_start_id_ = b.id;
    }
  }
  if (start_.reserved > limit) {
    start_.refused = true;
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<SeededBlock>> blocks = hooks.seed(*policy_, scenario.start_state);
  if (!blocks.ok()) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", scenario.path(), std::string(blocks.status().message())));
  }
  seeded_ = std::make_unique<SeededAllocator>(*policy_, *blocks);
  start_.seeded = true;
  return absl::OkStatus();
}

absl::StatusOr<ReplaySummary> ScenarioRun::Run(EventReader& reader) {
  if (start_.refused) {
    FailureRecord f;
    f.event = EventIndex(0);
    f.id = first_start_id_.value_or(0);
    f.requested = start_.reserved;
    f.rounded = start_.reserved;
    f.kind = AllocStatus::kOom;
    f.free_bytes = limit_;
    f.largest_free_block_bytes = limit_;
    return engine_->RefuseStart(f);
  }
  absl::StatusOr<ReplaySummary> summary = engine_->Run(reader);
  if (summary.ok() && checker_ && side_entries_) {
    checker_->CompareHistory(driven(), final_history_);
    summary->recorded = checker_->Check();
  }
  return summary;
}

}  // namespace hbmsim::sim
