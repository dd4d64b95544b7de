// The progress line of every command that runs size searches (`size`,
// `compare`, `advise`, and `replay`'s "what would fit" after a failure), on a
// terminal. A bfc `size` of a 100 M-event trace runs for a minute, and the
// advice after a failed replay of 5 M events takes 50 times the replay:
// without a sign of life a user cannot tell a slow search from a hung one.
// The survey's events are counted as `replay` counts its own (viz::Progress),
// then the search's bounds so far are drawn, with the configuration when
// there are several:
//
//   hbmsim size: 14 limits tried; fits at 2221537846 B, fails at 2221528374 B
//   hbmsim compare, 2 of 3 (torch): 9 limits tried; fits at 7680 B
//
// redrawn in place at most twice a second, starting once the command has run
// for a second (HBMSIM_PROGRESS_AFTER changes that), and only when stderr is
// a terminal, so pipes, files and CI logs never see it. The line is gone before the report is printed.
#ifndef HBMSIM_SIM_CLI_SIZE_PROGRESS_H_
#define HBMSIM_SIM_CLI_SIZE_PROGRESS_H_

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "sim/engine/replay_observer.h"
#include "sim/viz/progress.h"
#include "sim/whatif/size_search.h"

namespace hbmsim::sim::cli {

class SizeProgressLine {
 public:
  using Clock = std::chrono::steady_clock;

  // `enabled` false: every call does nothing. `prefix`: the command
  // ("hbmsim size"). `now` is the clock (tests).
  SizeProgressLine(std::FILE* out, bool enabled, std::string prefix,
                   std::function<Clock::time_point()> now = Clock::now);
  ~SizeProgressLine() { Finish(); }
  SizeProgressLine(const SizeProgressLine&) = delete;
  SizeProgressLine& operator=(const SizeProgressLine&) = delete;

  // Follows the survey's events (SizeOptions::survey_observer); nullptr when disabled.
  ReplayObserver* survey_observer() { return survey_.get(); }
  // A verdict the search counted (SizeOptions::on_progress).
  void OnSearch(const SizeProgress& p);
  // OnSearch as SizeOptions::on_progress.
  std::function<void(const SizeProgress&)> Callback() {
    return [this](const SizeProgress& p) { OnSearch(p); };
  }
  // Clears the line, if one was drawn.
  void Finish();

  // The line for `p`, without the redraw codes.
  static std::string Text(std::string_view prefix, const SizeProgress& p);

 private:
  std::FILE* out_;
  bool enabled_;
  std::string prefix_;
  std::function<Clock::time_point()> now_;
  viz::ProgressPace pace_ = viz::ConfiguredProgressPace();
  Clock::time_point start_;
  Clock::time_point last_draw_;
  bool drawn_ = false;
  viz::Progress survey_progress_;
  std::unique_ptr<ReplayObserver> survey_;
};

}  // namespace hbmsim::sim::cli

#endif  // HBMSIM_SIM_CLI_SIZE_PROGRESS_H_
