#include "sim/viz/progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace hbmsim::sim::viz {

using Clock = std::chrono::steady_clock;

absl::StatusOr<ProgressPace> ProgressPaceFromEnvironment() {
  ProgressPace pace;
  const char* text = std::getenv("HBMSIM_PROGRESS_AFTER");
  if (text == nullptr) return pace;
  // Whole text a number of seconds, 0 to a day: strtod alone accepts "1x", "nan" and "inf".
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (*text == '\0' || end == nullptr || *end != '\0' || !std::isfinite(seconds) || seconds < 0 ||
      seconds > 86400) {
    return absl::InvalidArgumentError(
        fmt::format("HBMSIM_PROGRESS_AFTER={}: not a number of seconds from 0 to 86400 (e.g. 0 or 2.5)", text));
  }
  pace.first_draw = std::chrono::milliseconds(std::llround(seconds * 1000));
  return pace;
}

ProgressPace ConfiguredProgressPace() {
  absl::StatusOr<ProgressPace> pace = ProgressPaceFromEnvironment();
  return pace.ok() ? *pace : ProgressPace{};
}

Progress::Progress(std::FILE* out, bool enabled, std::optional<uint64_t> total_events, ProgressPace pace)
    : out_(out), enabled_(enabled), total_(total_events), pace_(pace), start_(Clock::now()) {}

bool Progress::IsTerminal(std::FILE* stream) { return stream != nullptr && isatty(fileno(stream)) == 1; }

void Progress::Poll() {
  const Clock::time_point now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (now - start_ < pace_.first_draw || (last_draw_ && now - *last_draw_ < pace_.redraw)) return;
  last_draw_ = now;
  const double rate = static_cast<double>(done_) / elapsed;
  std::string line = fmt::format("hbmsim: {} events, {:.0f} events/s", done_, rate);
  if (total_ && *total_ > done_ && rate > 0) {
    line += fmt::format(", ETA {:.0f} s", static_cast<double>(*total_ - done_) / rate);
  }
  // \r and erase-to-end-of-line redraw in place.
  fmt::print(out_, "\r{}\x1b[K", line);
  std::fflush(out_);
  drawn_ = true;
}

void Progress::Finish() {
  if (!drawn_) return;
  fmt::print(out_, "\r\x1b[K");
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace hbmsim::sim::viz
