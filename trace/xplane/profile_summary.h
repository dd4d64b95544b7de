// What `hbmsim diagnose` says about a profile, per allocator, from the
// recorded figures alone (no replay):
//
//   peak        the record after which bytes_allocated was highest in the
//               recording (the first such), and the recorded
//               peak_bytes_in_use, which may predate the recording
//   at the peak the live chunks grouped by tf_op (chunk bytes, count), the
//               bytes allocated before the recording as one group
//               ("(before the recording)"), largest first, ties by name
//   series      per record: time, bytes_allocated, BFC's own fragmentation
#ifndef HBMSIM_TRACE_XPLANE_PROFILE_SUMMARY_H_
#define HBMSIM_TRACE_XPLANE_PROFILE_SUMMARY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/xplane/profile_trace.h"

namespace hbmsim::trace::xplane {

inline constexpr std::string_view kBeforeRecording = "(before the recording)";
inline constexpr std::string_view kNoOp = "(no tf_op)";

struct OpBytes {
  std::string op;
  int64_t bytes = 0;
  int64_t chunks = 0;
};

struct SeriesPoint {
  int64_t time_ps = 0;
  int64_t bytes_in_use = 0;
  std::optional<double> fragmentation;
};

struct AllocatorSummary {
  std::string name;
  int64_t allocations = 0;
  int64_t deallocations = 0;
  std::optional<int64_t> limit;
  int64_t start_ps = 0;  // time of the first record, from the profile's first memory record
  int64_t end_ps = 0;
  int64_t peak_bytes = 0;                // the highest bytes in use in the recording
  size_t peak_record = 0;                // the record that reached it (or 0 with peak_at_start)
  bool peak_at_start = false;            // nothing in the recording exceeded the bytes in use before it
  std::optional<int64_t> recorded_peak;  // the last record's peak_bytes_in_use
  std::vector<OpBytes> at_peak;          // largest first
  std::vector<SeriesPoint> series;
  std::optional<double> max_fragmentation;
  size_t max_fragmentation_record = 0;
};

std::vector<AllocatorSummary> SummarizeProfile(const ProfileTrace& t);

}  // namespace hbmsim::trace::xplane

#endif  // HBMSIM_TRACE_XPLANE_PROFILE_SUMMARY_H_
