// The `failures` array of the --json report, written as the replay runs.
// The CLI contract wants one object per failed allocation, and a replay can
// fail millions of times (2 M failures are a 434 MB array): instead of
// holding them, each failure is formatted at once into a scratch file
// (trace/io/spill_file.h) and WriteJsonReport() copies it into the report,
// so memory stays bounded whatever the outcome.
//
// Each element is FailureJson() printed exactly as nlohmann's dump(2) prints
// it at depth two, so the file is byte for byte what building the whole
// array in memory would give.
#ifndef HBMSIM_SIM_REPORT_FAILURE_SPILL_H_
#define HBMSIM_SIM_REPORT_FAILURE_SPILL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "sim/layer.h"
#include "sim/report/replay_recorder.h"
#include "trace/io/output_file.h"
#include "trace/io/spill_file.h"

namespace hbmsim::sim {

class FailureSpill : public FailureSink {
 public:
  explicit FailureSpill(std::unique_ptr<io::SpillFile> file) : file_(std::move(file)) {}

  void Add(const FailureRecord& f, const FailureLabels& labels, const std::string& mark_before) override;

  uint64_t count() const { return count_; }
  io::SpillFile& file() { return *file_; }

 private:
  std::unique_ptr<io::SpillFile> file_;
  std::string element_;  // one element, reused
  uint64_t count_ = 0;
};

// Writes `report` (JsonReport's object) to `out` as dump(2) plus a newline;
// with a spill, its elements become the "failures" array in place of the
// ones `report` holds.
absl::Status WriteJsonReport(nlohmann::ordered_json report, FailureSpill* spill, io::OutputFile& out);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_REPORT_FAILURE_SPILL_H_
