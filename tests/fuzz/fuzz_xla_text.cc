// libFuzzer target: XLA's text artifacts (trace/xla): a buffer-assignment dump
// with its live ranges, joined into events and read to the end, and the
// rematerialization warnings of the same bytes read as a log. A NUL byte
// splits the input into the two files of a pair (X-buffer-assignment.txt,
// X-live-range.txt); without one it is an assignment with the ranges appended.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "tests/fuzz/fuzz_util.h"
#include "trace/xla/remat_warning.h"
#include "trace/xla/text_pair.h"
#include "trace/xla/xla_trace.h"

HBMSIM_FUZZ_ENTRY(xla_text, XlaTextFuzzCorpus) {
  using namespace hbmsim;
  const std::string text = fuzz::AsString(data, size);
  const std::string ba_name = "fuzz-buffer-assignment.txt";
  const std::string lr_name = "fuzz-live-range.txt";
  absl::StatusOr<std::vector<xla::RematWarning>> remat = xla::FindRematWarnings(text, "fuzz.log");
  if (!remat.ok()) fuzz::CheckErrorMessage(remat.status(), "fuzz.log");

  const size_t nul = text.find('\0');
  std::string_view assignment = text;
  std::optional<std::string_view> live_ranges;
  if (nul != std::string::npos) {
    assignment = std::string_view(text).substr(0, nul);
    live_ranges = std::string_view(text).substr(nul + 1);
  }
  absl::StatusOr<xla::XlaTrace> trace = xla::ParseTextPair(assignment, ba_name, live_ranges, lr_name);
  if (!trace.ok()) {
    // Either file may be the one at fault.
    const std::string_view which = std::string(trace.status().message()).rfind(lr_name, 0) == 0 ? lr_name : ba_name;
    fuzz::CheckErrorMessage(trace.status(), which);
    return 0;
  }
  const uint64_t events = trace->events.size();
  xla::XlaEventReader reader(*std::move(trace));
  fuzz::DrainReader(reader, ba_name, fuzz::AfterError::kStop, events + 2);
  return 0;
}
