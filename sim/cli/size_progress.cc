#include "sim/cli/size_progress.h"

#include "fmt/format.h"

namespace hbmsim::sim::cli {
namespace {

// Ticks the survey's progress once per alloc and once per release: the events
// that are most of any trace, at the cost of two calls each, only on a terminal.
class SurveyTicker final : public ReplayObserver {
 public:
  explicit SurveyTicker(viz::Progress& progress) : progress_(progress) {}
  void OnAlloc(EventIndex, const Event&, const AllocResult&) override { progress_.Tick(); }
  void OnRelease(EventIndex, const Event&) override { progress_.Tick(); }

 private:
  viz::Progress& progress_;
};

}  // namespace

SizeProgressLine::SizeProgressLine(std::FILE* out, bool enabled, std::string prefix,
                                   std::function<Clock::time_point()> now)
    : out_(out),
      enabled_(enabled),
      prefix_(std::move(prefix)),
      now_(std::move(now)),
      start_(now_()),
      last_draw_(start_),
      survey_progress_(out, enabled),
      survey_(enabled ? std::make_unique<SurveyTicker>(survey_progress_) : nullptr) {}

std::string SizeProgressLine::Text(std::string_view prefix, const SizeProgress& p) {
  std::string line(prefix);
  if (p.configs > 1) line += fmt::format(", {} of {} ({})", p.config + 1, p.configs, p.config_label);
  line += fmt::format(": {} limit{} tried", p.limits_tried, p.limits_tried == 1 ? "" : "s");
  if (p.smallest_fit) line += fmt::format("; fits at {} B", p.smallest_fit->value());
  if (p.largest_fail)
    line += fmt::format("{} fails at {} B", p.smallest_fit ? "," : ";", p.largest_fail->value());
  return line;
}

void SizeProgressLine::OnSearch(const SizeProgress& p) {
  if (!enabled_) return;
  survey_progress_.Finish();  // the survey is over once verdicts come in
  const Clock::time_point now = now_();
  // Short searches end before anyone could read a line.
  if (now - start_ < pace_.first_draw || (drawn_ && now - last_draw_ < pace_.redraw)) return;
  last_draw_ = now;
  // \r and erase-to-end-of-line redraw in place.
  fmt::print(out_, "\r{}\x1b[K", Text(prefix_, p));
  std::fflush(out_);
  drawn_ = true;
}

void SizeProgressLine::Finish() {
  survey_progress_.Finish();
  if (!drawn_) return;
  fmt::print(out_, "\r\x1b[K");
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace hbmsim::sim::cli
