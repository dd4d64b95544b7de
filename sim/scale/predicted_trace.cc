#include "sim/scale/predicted_trace.h"

#include <string>
#include <vector>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sim/layer.h"
#include "sim/scenario/scenario_config.h"
#include "trace/binary/trace_sink.h"

namespace hbmsim::sim::scale {
namespace {

TraceMetadata Header(const Scenario& predicted) {
  const Recording& r = *predicted.recording;
  TraceMetadata header = r.facts().metadata;
  const PolicySpec* policy = RecordedPolicy(r);
  if (policy == nullptr) return header;
  if (header.Find(kAllocatorKey) == nullptr) header.entries.emplace_back(kAllocatorKey, policy->name);
  const DeviceId device = predicted.device.value_or(DeviceId(0));
  std::vector<std::string> edits = RecordedOptionEdits(r, *policy, device);
  std::erase_if(edits, [](const std::string& e) { return e.find_first_of(" \t") != std::string::npos; });
  if (!edits.empty() && header.Find(kAllocatorSettingsKey) == nullptr) {
    header.entries.emplace_back(kAllocatorSettingsKey, fmt::format("{}", fmt::join(edits, " ")));
  }
  const std::optional<RecordedLimit> limit = r.facts().device(device).limit;
  if (limit && header.Find(kDeviceBytesKey) == nullptr) {
    header.entries.emplace_back(kDeviceBytesKey, fmt::format("{}", limit->limit.value()));
  }
  return header;
}

}  // namespace

absl::Status WritePredictedTrace(const Scenario& predicted, std::ostream& out, std::string_view format) {
  absl::StatusOr<std::unique_ptr<TraceSink>> sink = MakeTraceSink(out, format);
  if (!sink.ok()) return sink.status();
  if (absl::Status s = (*sink)->WriteHeader(Header(predicted)); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<EventReader>> reader = predicted.Events();
  if (!reader.ok()) return reader.status();
  Event e;
  while (true) {
    absl::StatusOr<bool> got = (*reader)->Next(e);
    if (!got.ok()) return got.status();
    if (!*got) break;
    if (absl::Status s = (*sink)->Write(e); !s.ok()) return s;
  }
  return (*sink)->Finish();
}

}  // namespace hbmsim::sim::scale
