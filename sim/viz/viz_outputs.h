// The glue `hbmsim replay` uses for --html, --perfetto, --memory-viz and the
// terminal progress line: the command registers the flags, wraps its reader
// and engine with Attach(), and calls Write() after the replay. With no output
// requested and stderr not a terminal, Attach() adds nothing to the replay.
#ifndef HBMSIM_SIM_VIZ_VIZ_OUTPUTS_H_
#define HBMSIM_SIM_VIZ_VIZ_OUTPUTS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/engine/replay_engine.h"
#include "sim/layer.h"
#include "sim/report/replay_report.h"
#include "sim/viz/memory_viz.h"
#include "sim/viz/progress.h"
#include "sim/viz/viz_recorder.h"
#include "trace/io/output_set.h"

namespace hbmsim::sim::viz {

struct VizFlags {
  std::string html;        // --html FILE
  std::string perfetto;    // --perfetto FILE
  std::string memory_viz;  // --memory-viz FILE.pickle|FILE.pkl|FILE.json (MemoryVizIsJson)
  // --memory-viz-addresses recorded|simulated; empty: recorded when the
  // replay reproduced every recorded address, else simulated.
  std::string memory_viz_addresses;
};

// What --memory-viz writes, by the name's extension (case-insensitive):
// `.json` the snapshot as JSON, `.pickle` or `.pkl` the pickle that
// pytorch.org/memory_viz and torch.cuda.memory._load take. Any other name is
// refused (exit 2) rather than guessed: `v.txt` used to be a pickle, silently.
absl::StatusOr<bool> MemoryVizIsJson(const std::string& path);

class VizOutputs {
 public:
  explicit VizOutputs(VizFlags flags) : flags_(std::move(flags)) {}

  // Adds the observers to `engine` and returns the reader it must read.
  EventReader& Attach(const Allocator& allocator, const ReplayOptions& options, ReplayEngine& engine,
                      EventReader& reader);
  // The flags' own errors, before any file is opened (MemoryVizIsJson).
  absl::Status CheckFlags() const;
  // The requested files, for the command's io::OutputSet (empty paths: not requested).
  std::vector<io::NamedPath> Outputs() const;
  // Writes the requested files into `outputs` (opened from Outputs() before
  // the replay; the command commits them); an error names the flag and the file.
  absl::Status Write(const ReplayReportInput& report, const io::OutputSet& outputs);

 private:
  absl::Status WriteMemoryViz(const ReplayReportInput& report, const io::OutputSet& outputs) const;
  absl::StatusOr<std::string> AddressesShown() const;

  VizFlags flags_;
  std::unique_ptr<Progress> progress_;
  std::unique_ptr<VizRecorder> recorder_;
  std::unique_ptr<MemoryVizRecorder> memory_viz_;
};

}  // namespace hbmsim::sim::viz

#endif  // HBMSIM_SIM_VIZ_VIZ_OUTPUTS_H_
