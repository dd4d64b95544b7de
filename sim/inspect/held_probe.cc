#include "sim/inspect/held_probe.h"

#include "fmt/format.h"
#include "sim/config/policy_registry.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_config.h"
#include "sim/scenario/scenario_run.h"

namespace hbmsim::sim::inspect {

absl::StatusOr<AllocatorConfig> HeldPolicy(std::shared_ptr<const Recording> recording, DeviceId device,
                                           const std::string& allocator) {
  std::string name = allocator;
  if (name.empty()) {
    const PolicySpec* own = RecordedPolicy(*recording);
    if (own == nullptr)
      return absl::InvalidArgumentError("--allocator: required: the recording names no allocator");
    name = own->name;
  }
  absl::StatusOr<AllocatorConfig> config = ResolveAllocator(BuiltinPolicies(), name);
  if (!config.ok())
    return absl::InvalidArgumentError(
        fmt::format("--allocator {}: {}", name, std::string(config.status().message())));
  if (std::optional<RecordedSettings> s = recording->facts().device(device).settings) {
    ApplyRecordedSettings(*s, device, *config);
  }
  return config;
}

absl::StatusOr<HeldProbe> ProbeHeld(std::shared_ptr<const Recording> recording, DeviceId device,
                                    const AllocatorConfig& config, Bytes limit, Bytes size) {
  absl::StatusOr<Scenario> scenario = MakeScenario(std::move(recording), [&] {
    ScenarioRequest request;
    request.device = device;
    return request;
  }());
  if (!scenario.ok()) return scenario.status();
  ReplayOptions options;
  options.device = device;
  absl::StatusOr<std::unique_ptr<ScenarioRun>> run = ScenarioRun::Prepare(*scenario, config, limit, options);
  if (!run.ok()) return run.status();
  absl::StatusOr<ReplaySummary> summary = (*run)->Run();
  if (!summary.ok()) return summary.status();
  HeldProbe probe;
  probe.requested = size;
  probe.in_use_before = Bytes(static_cast<uint64_t>(std::max<int64_t>(0, (*run)->policy().BytesInUse())));
  probe.placement_failures = summary->failures;
  probe.placed_all = summary->failures == 0;
  if (!probe.placed_all) return probe;
  // An id no held buffer has: they are numbered from 1 in file order.
  AllocRequest request{.id = BufferId(~uint64_t{0} - 1),
                       .bytes = size,
                       .stream = StreamId(0),
                       .event = EventIndex(summary->events_read),
                       .recorded_address = std::nullopt};
  probe.result = (*run)->driven().Allocate(request);
  return probe;
}

}  // namespace hbmsim::sim::inspect
