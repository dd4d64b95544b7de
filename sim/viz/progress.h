// Progress of a long replay on stderr: "events done, events/s", redrawn in
// place about twice a second, starting only once the replay has run for a
// second (HBMSIM_PROGRESS_AFTER changes that), and only when stderr is a
// terminal, so pipes, files and CI logs never see it.
#ifndef HBMSIM_SIM_VIZ_PROGRESS_H_
#define HBMSIM_SIM_VIZ_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>

#include "absl/status/statusor.h"

namespace hbmsim::sim::viz {

// When a progress line first shows and how often it is redrawn. A second
// before the first line: short runs end before anyone could read one.
struct ProgressPace {
  std::chrono::milliseconds first_draw{1000};
  std::chrono::milliseconds redraw{500};
};
// The pace with HBMSIM_PROGRESS_AFTER (seconds before the first line, a
// decimal number such as "0" or "2.5"; docs/cli.md) applied; an error names
// the variable and its value. The CLI checks it once at start-up (exit 2).
absl::StatusOr<ProgressPace> ProgressPaceFromEnvironment();
// The same, for the progress lines themselves: the default pace if the
// variable is malformed (the CLI has refused to start by then).
ProgressPace ConfiguredProgressPace();

class Progress {
 public:
  // `enabled` false turns every call into a counter increment.
  Progress(std::FILE* out, bool enabled, std::optional<uint64_t> total_events = std::nullopt,
           ProgressPace pace = ConfiguredProgressPace());
  // True when `stream` is a terminal (isatty).
  static bool IsTerminal(std::FILE* stream);

  // One event done. Reads the clock once every kClockStride events.
  void Tick() {
    if (++done_ % kClockStride == 0 && enabled_) Poll();
  }
  // Clears the line if one was drawn.
  void Finish();

 private:
  static constexpr uint64_t kClockStride = 4096;
  void Poll();

  std::FILE* out_;
  bool enabled_;
  std::optional<uint64_t> total_;
  ProgressPace pace_;
  uint64_t done_ = 0;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::optional<std::chrono::steady_clock::time_point> last_draw_;  // none before the first line
};

}  // namespace hbmsim::sim::viz

#endif  // HBMSIM_SIM_VIZ_PROGRESS_H_
