// The summary of a sweep's results: every task-NNNNNN.json line in a folder
// (one shard's, or all shards' copied together), grouped per configuration.
//
// One row per (allocator, settings, question, limit):
//   limit:  jobs, how many fit at the limit, failed, errors
//   size:   jobs, how many fit at some limit, the limit needed (median, p90,
//           max over the recordings: nearest rank) and the saving against
//           the allocator's first settings combination ("today", the grid's
//           first), median and total over the recordings both ran; for the
//           recordings that began warm, the limit needed from a fresh start
//           too (a section of its own in the text, columns in the CSV)
//   advise: jobs, errors, and how many recordings some setting makes fit
//           at the limit when today's does not
//   scale:  one row per size (to=N: fit when the prediction fits; need: its
//           peak reserved bytes) and per fit limit (fit when some size fits;
//           need: the largest size that fits)
// Every figure is read from the lines; nothing is replayed here.
#ifndef HBMSIM_SIM_SWEEP_SWEEP_REPORT_H_
#define HBMSIM_SIM_SWEEP_SWEEP_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace hbmsim::sim::sweep {

// What a task's line keeps of its command's --json report: enough for the
// summary and for a user's own analysis, without a replay's per-failure list
// (which grows with the recording).
nlohmann::ordered_json CompactResult(const std::string& question, nlohmann::ordered_json report);

struct SummaryRow {
  std::string allocator, settings, question, bytes_limit;
  int jobs = 0, fit = 0, failed = 0, errors = 0;
  std::vector<uint64_t> needed;        // size: each recording's min_bytes_limit
  std::vector<int64_t> savings;        // size: today's min limit minus this one, per recording
  // size: the min_bytes_limit from a fresh start of each recording that
  // began warm (its result's fresh_start; sim/whatif/fresh_start.h)
  std::vector<uint64_t> needed_fresh;
  std::optional<uint64_t> Percentile(double p) const { return NearestRank(needed, p); }
  std::optional<uint64_t> FreshPercentile(double p) const { return NearestRank(needed_fresh, p); }
  static std::optional<uint64_t> NearestRank(std::vector<uint64_t> v, double p);
};

struct SweepSummary {
  std::string dir;
  int lines = 0;
  std::vector<SummaryRow> rows;  // in the order of their first task
};

// The result files of DIR ("DIR/task-NNNNNN.json"), in task order: what
// SummarizeResults reads, and so what `sweep report` may never write over.
// Hidden files are the temporaries of runs in progress or killed, never results.
absl::StatusOr<std::vector<std::string>> ResultFiles(const std::string& dir);
// The result line at `path`: a JSON object with a `key` object and an
// `exit_code`; nullopt when the file is missing or the line is damaged (cut
// by a writer that was not atomic). The report refuses such a line; a sweep
// run counts its task as not finished and runs it again.
std::optional<nlohmann::ordered_json> ReadResultLine(const std::string& path);
absl::StatusOr<SweepSummary> SummarizeResults(const std::string& dir);
std::string SummaryText(const SweepSummary& s);
std::string SummaryCsv(const SweepSummary& s);
std::string SummaryHtml(const SweepSummary& s);

}  // namespace hbmsim::sim::sweep

#endif  // HBMSIM_SIM_SWEEP_SWEEP_REPORT_H_
