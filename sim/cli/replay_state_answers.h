// What `hbmsim replay` answers for a recording that has nothing to replay.
// A recording's facts decide which report it gets (AnswerFor): a trace is
// replayed; a state snapshot (segments, no history) or a held state (a JAX
// device memory profile: one moment, no addresses) is what the user has, so
// replay answers with the report `hbmsim inspect` gives for it (exit 0)
// instead of refusing the file. The outputs that draw or list a replay have
// nothing in them then: each is dropped with a note (not left as an empty
// file, as fuzz_outputs found). The Python module asks for --placements and
// --html on every replay, so that is a note, not an error.
#ifndef HBMSIM_SIM_CLI_REPLAY_STATE_ANSWERS_H_
#define HBMSIM_SIM_CLI_REPLAY_STATE_ANSWERS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/cli/command.h"
#include "sim/layer.h"
#include "sim/scenario/scenario.h"
#include "trace/formats/recording.h"
#include "trace/io/output_set.h"
#include "trace/io/path_identity.h"

namespace hbmsim::sim::cli {

// The report a recording gets from `hbmsim replay`.
enum class RecordingAnswer {
  kReplay,         // events to replay: the replay report
  kHeldState,      // a held state (RecordedFacts::held_state): inspect's held report
  kRecordedState,  // a state and no events (RecordedFacts::state_only): inspect's analysis
};
RecordingAnswer AnswerFor(const RecordedFacts& facts);

// The replay's flags a state answer follows, and where it writes.
struct StateQuestion {
  std::string trace;        // TRACE, as given
  ScenarioRequest request;  // --device
  std::string bytes_limit;  // --bytes-limit ("" when absent)
  std::string allocator;    // --allocator ("" when absent)
  bool quiet = false;       // --quiet: the first paragraph only
  // The outputs only a replay fills, in the order their notes are printed
  // (an empty path: not asked for).
  std::vector<io::NamedPath> replay_outputs;
  io::OutputSet* outputs = nullptr;  // --json is written here, then everything committed
};

// The report for a recording whose answer is kHeldState or kRecordedState:
// what the replay returns (exit 0, or the failure).
std::optional<CommandFailure> AnswerWithState(RecordingAnswer answer,
                                              std::shared_ptr<const Recording> recording,
                                              const StateQuestion& question);

}  // namespace hbmsim::sim::cli

#endif  // HBMSIM_SIM_CLI_REPLAY_STATE_ANSWERS_H_
