#include "sim/cli/replay_state_answers.h"

#include <functional>
#include <utility>

#include "fmt/format.h"
#include "sim/config/device_presets.h"
#include "sim/inspect/held_report.h"
#include "sim/inspect/inspect_report.h"
#include "sim/layer.h"
#include "trace/core/json_text.h"

namespace hbmsim::sim::cli {
namespace {

// The outputs a replay would have filled are not written, each with a note.
void DropReplayOutputs(const StateQuestion& q) {
  for (const io::NamedPath& output : q.replay_outputs) {
    if (output.path.empty()) continue;
    q.outputs->Drop(output.role);
    Note(fmt::format("hbmsim replay: {} {} not written: {} holds an allocator state and no trace to replay",
                     output.role, output.path, q.trace));
  }
}

// --bytes-limit as a size or a device preset; nullopt when not given.
absl::StatusOr<std::optional<Bytes>> StateLimit(const StateQuestion& q) {
  if (q.bytes_limit.empty()) return std::nullopt;
  absl::StatusOr<ParsedLimit> b = ParseLimitOrPreset(q.bytes_limit, "--bytes-limit");
  if (!b.ok()) return b.status();
  return b->bytes;
}

// The text on stdout, --json beside it when asked for, and every output
// committed: exit 0.
std::optional<CommandFailure> WriteStateAnswer(const StateQuestion& q, const std::string& text,
                                               const std::function<std::string()>& json) {
  if (absl::Status s = io::WriteStdout(text); !s.ok()) return BadInput(s);
  if (q.outputs->Get("--json") != nullptr) {
    if (absl::Status s = q.outputs->Write("--json", json()); !s.ok()) return BadInput(s);
  }
  if (absl::Status s = q.outputs->CommitAll(); !s.ok()) return BadInput(s);
  return CommandFailure{kExitOk, ""};
}

// A state snapshot (segments, no history): its state, analysed as inspect does.
std::optional<CommandFailure> AnswerWithRecordedState(std::shared_ptr<const Recording> recording,
                                                      const StateQuestion& q) {
  inspect::SourceOptions options;
  options.path = q.trace;
  options.device = q.request.device;
  if (!q.request.device_name.empty()) {  // a snapshot numbers its devices and names none
    return CommandFailure{kExitBadInput,
                          fmt::format("--device {}: expected a device number ({} names no devices)",
                                      q.request.device_name, q.trace)};
  }
  absl::StatusOr<std::optional<Bytes>> limit = StateLimit(q);
  if (!limit.ok()) return BadInput(limit.status());
  options.bytes_limit = *limit;
  absl::StatusOr<inspect::InspectedState> state = inspect::InspectRecording(std::move(recording), options);
  if (!state.ok()) return BadInput(state.status());
  const inspect::InspectReport report = inspect::MakeInspectReport(q.trace, *state, {}, StreamId(0));
  const std::string text = fmt::format(
      "{} holds an allocator state and no trace to replay: its state, analysed as `hbmsim inspect` does "
      "(its --probe SIZE asks what the allocator would do with a request)\n\n{}",
      q.trace, q.quiet ? "" : inspect::RenderInspectText(report));
  return WriteStateAnswer(q, text, [&] { return JsonText(inspect::RenderInspectJson(report), 2) + "\n"; });
}

// A held state (a JAX device memory profile): the held report inspect
// gives; inspect's --probe places the buffers.
std::optional<CommandFailure> AnswerWithHeldState(std::shared_ptr<const Recording> recording,
                                                  const StateQuestion& q) {
  inspect::HeldOptions options;
  options.device = q.request.device;
  options.device_name = q.request.device_name;
  options.allocator = q.allocator;
  absl::StatusOr<std::optional<Bytes>> limit = StateLimit(q);
  if (!limit.ok()) return BadInput(limit.status());
  options.limit = *limit;
  absl::StatusOr<inspect::HeldReport> report = inspect::MakeHeldReport(std::move(recording), options);
  if (!report.ok()) return BadInput(report.status());
  const std::string text = fmt::format(
      "{} holds what a JAX runtime had live at one moment, with no addresses and no trace to replay: its "
      "state "
      "(`hbmsim inspect {} --probe SIZE --bytes-limit LIMIT` asks whether a request would fit)\n\n{}",
      report->file, q.trace, q.quiet ? "" : inspect::RenderHeldText(*report));
  return WriteStateAnswer(q, text, [&] { return inspect::HeldJsonText(*report); });
}

}  // namespace

RecordingAnswer AnswerFor(const RecordedFacts& facts) {
  if (facts.held_state != nullptr) return RecordingAnswer::kHeldState;
  if (facts.state_only) return RecordingAnswer::kRecordedState;
  return RecordingAnswer::kReplay;
}

std::optional<CommandFailure> AnswerWithState(RecordingAnswer answer,
                                              std::shared_ptr<const Recording> recording,
                                              const StateQuestion& question) {
  DropReplayOutputs(question);
  if (answer == RecordingAnswer::kHeldState) return AnswerWithHeldState(std::move(recording), question);
  return AnswerWithRecordedState(std::move(recording), question);
}

}  // namespace hbmsim::sim::cli
