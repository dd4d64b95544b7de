// Progress of a long replay on stderr: "events done, events/s", redrawn in
// place about twice a second, starting only once the replay has run for a
// second, and only when stderr is a terminal, so pipes, files and CI logs
// never see it.
#ifndef HBMSIM_SIM_VIZ_PROGRESS_H_
#define HBMSIM_SIM_VIZ_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>

namespace hbmsim::viz {

class Progress {
 public:
  // `enabled` false turns every call into a counter increment.
  Progress(std::FILE* out, bool enabled, std::optional<uint64_t> total_events = std::nullopt);
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
  uint64_t done_ = 0;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace hbmsim::viz

#endif  // HBMSIM_SIM_VIZ_PROGRESS_H_
