// A replay's timeline over event index, downsampled to a fixed number of
// columns so its memory is O(columns) whatever the trace length.
//
//   column c covers events [c·w, (c+1)·w); w = 1, 2, 4, ... doubles (and
//   neighbouring columns merge pairwise) whenever event c would need column
//   kMaxColumns. Each column keeps the min and max of every series and the
//   number of failures / defragmentations / evictions in it, so a one-event
//   spike is never averaged away: the drawn band always reaches every peak.
#ifndef HBMSIM_SIM_VIZ_TIMELINE_H_
#define HBMSIM_SIM_VIZ_TIMELINE_H_

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace hbmsim::sim::viz {

enum Series : int { kLiveRequested, kBytesInUse, kPoolBytes, kLargestFree, kSeriesCount };
std::string_view SeriesName(int s);  // "live_requested", "bytes_in_use", ...

enum MarkerKind : int { kFailureMarker, kDefragMarker, kEvictionMarker, kMarkerKinds };

struct Column {
  bool sampled = false;  // false: no event of the selected device fell here
  std::array<int64_t, kSeriesCount> min{};
  std::array<int64_t, kSeriesCount> max{};
  std::array<uint32_t, kMarkerKinds> markers{};
};

class Timeline {
 public:
  static constexpr uint64_t kMaxColumns = 1200;

  // The state after event `index`; indexes arrive in increasing order.
  void Sample(uint64_t index, const std::array<int64_t, kSeriesCount>& values);
  void Mark(uint64_t index, MarkerKind kind);

  const std::vector<Column>& columns() const { return columns_; }
  uint64_t events_per_column() const { return width_; }
  uint64_t events() const { return events_; }  // 1 + the last sampled index
  // The exact maximum of a series over every sample.
  int64_t Max(int s) const { return peak_[s]; }

 private:
  Column& ColumnFor(uint64_t index);
  void Halve();

  uint64_t width_ = 1;
  uint64_t events_ = 0;
  std::vector<Column> columns_;
  std::array<int64_t, kSeriesCount> peak_{};
};

}  // namespace hbmsim::sim::viz

#endif  // HBMSIM_SIM_VIZ_TIMELINE_H_
