#include "sim/viz/progress.h"

#include <unistd.h>

#include "fmt/format.h"

namespace hbmsim::viz {

using Clock = std::chrono::steady_clock;

Progress::Progress(std::FILE* out, bool enabled, std::optional<uint64_t> total_events)
    : out_(out), enabled_(enabled), total_(total_events), start_(Clock::now()), last_draw_(start_) {}

bool Progress::IsTerminal(std::FILE* stream) { return stream != nullptr && isatty(fileno(stream)) == 1; }

void Progress::Poll() {
  const Clock::time_point now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  // Short replays finish before anyone could read a progress line.
  if (elapsed < 1.0 || now - last_draw_ < std::chrono::milliseconds(500)) return;
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

}  // namespace hbmsim::viz
