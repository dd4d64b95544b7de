#include "sim/viz/viz_outputs.h"

#include <cctype>
#include <cstdio>

#include "fmt/format.h"
#include "sim/layer.h"
#include "sim/viz/html_report.h"
#include "sim/viz/perfetto_trace.h"
#include "trace/core/json_text.h"

namespace hbmsim::sim::viz {
namespace {

// The file was created with the command's other outputs before the replay
// (trace/io/output_set.h); the command commits them all at the end.
absl::Status WriteText(std::string_view flag, const io::OutputSet& outputs, const std::string& text) {
  io::OutputFile* out = outputs.Get(flag);
  if (out == nullptr) return absl::InternalError(fmt::format("{}: not opened", flag));
  return io::WithRole(flag, out->Write(text));
}

bool EndsWithNoCase(const std::string& text, std::string_view suffix) {
  if (text.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[text.size() - suffix.size() + i])) != suffix[i])
      return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> MemoryVizIsJson(const std::string& path) {
  if (EndsWithNoCase(path, ".json")) return true;
  if (EndsWithNoCase(path, ".pickle") || EndsWithNoCase(path, ".pkl")) return false;
  return absl::InvalidArgumentError(
      fmt::format("--memory-viz {}: name the file OUT.pickle or OUT.pkl (the pickle pytorch.org/memory_viz "
                  "loads) or OUT.json (the same snapshot as JSON)",
                  path));
}

absl::Status VizOutputs::CheckFlags() const {
  if (flags_.memory_viz.empty()) return absl::OkStatus();
  return MemoryVizIsJson(flags_.memory_viz).status();
}

EventReader& VizOutputs::Attach(const Allocator& allocator, const ReplayOptions& options,
                                ReplayEngine& engine, EventReader& reader) {
  EventReader* input = &reader;
  if (!flags_.memory_viz.empty()) {
    memory_viz_ = std::make_unique<MemoryVizRecorder>(allocator, options);
    engine.AddObserver(memory_viz_.get());
    input = &memory_viz_->Tap(*input);
  }
  const bool record = !flags_.html.empty() || !flags_.perfetto.empty();
  const bool terminal = Progress::IsTerminal(stderr);
  if (!record && !terminal) return *input;
  progress_ = std::make_unique<Progress>(stderr, terminal);
  recorder_ = std::make_unique<VizRecorder>(allocator, options, progress_.get(), record);
  engine.AddObserver(recorder_.get());
  return recorder_->Tap(*input);
}

// Which addresses the export shows: the simulated ones are the recorded ones
// exactly when the replay placed every recorded alloc at its address (new
// memory starts at the recorded bases under --check-recorded, and in a
// snapshot's replay by its own runtime's model: ScenarioRun::Prepare).
absl::StatusOr<std::string> VizOutputs::AddressesShown() const {
  const MemoryVizRecorder& m = *memory_viz_;
  const std::string counts = fmt::format("{} of {} recorded allocs were placed at their recorded address",
                                         m.matched_allocs(), m.recorded_allocs());
  const std::string& mode = flags_.memory_viz_addresses;
  if (mode == "simulated") return std::string("simulated");
  if (m.addresses_reproduced()) return std::string("recorded");
  if (mode == "recorded") {
    return absl::InvalidArgumentError(
        fmt::format("--memory-viz-addresses recorded: {}{}; show the simulated ones (--memory-viz-addresses "
                    "simulated){}",
                    counts, m.recorded_allocs() == 0 ? " (the trace records no addr=)" : "",
                    m.recorded_allocs() == 0 ? "" : " or replay with --check-recorded"));
  }
  return fmt::format("simulated ({})", counts);
}

std::vector<io::NamedPath> VizOutputs::Outputs() const {
  return {{"--memory-viz", flags_.memory_viz}, {"--html", flags_.html}, {"--perfetto", flags_.perfetto}};
}

absl::Status VizOutputs::WriteMemoryViz(const ReplayReportInput& report, const io::OutputSet& outputs) const {
  if (memory_viz_ == nullptr) return absl::OkStatus();
  absl::StatusOr<std::string> addresses = AddressesShown();
  if (!addresses.ok()) return addresses.status();
  // The settings that ran, in the runtime's own keys when it records any.
  const RecordingHooks* hooks = report.config != nullptr ? &report.config->policy->recording : nullptr;
  nlohmann::ordered_json settings = hooks != nullptr && hooks->settings_of
                                        ? hooks->settings_of(*report.allocator)
                                        : nlohmann::ordered_json{{"PYTORCH_CUDA_ALLOC_CONF", ""}};
  settings["hbmsim_allocator"] = std::string(report.allocator->name());
  settings["hbmsim_options"] = report.config != nullptr ? EffectiveOptionsText(*report.config) : "";
  settings["hbmsim_addresses"] = *addresses;
  memory_viz_->Finish();
  if (absl::Status s = memory_viz_->CheckPlacements(); !s.ok()) return s;
  const nlohmann::ordered_json snapshot = memory_viz_->Snapshot(settings);
  absl::StatusOr<bool> json_or = MemoryVizIsJson(flags_.memory_viz);
  if (!json_or.ok()) return json_or.status();
  const bool json = *json_or;
  return WriteText("--memory-viz", outputs, json ? JsonText(snapshot) + "\n" : SnapshotPickle(snapshot));
}

absl::Status VizOutputs::Write(const ReplayReportInput& report, const io::OutputSet& outputs) {
  if (absl::Status s = WriteMemoryViz(report, outputs); !s.ok()) return s;
  if (recorder_ == nullptr) return absl::OkStatus();
  recorder_->Finish();
  if (!flags_.html.empty()) {
    if (absl::Status s = WriteText("--html", outputs, HtmlReport(*recorder_, report)); !s.ok()) return s;
  }
  if (!flags_.perfetto.empty()) {
    const std::string json = JsonText(PerfettoTrace(*recorder_, report.allocator->name())) + "\n";
    if (absl::Status s = WriteText("--perfetto", outputs, json); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace hbmsim::sim::viz
