#include "sim/viz/timeline.h"

#include <algorithm>

namespace hbmsim::sim::viz {

std::string_view SeriesName(int s) {
  switch (s) {
    case kLiveRequested:
      return "live_requested";
    case kBytesInUse:
      return "bytes_in_use";
    case kPoolBytes:
      return "pool_bytes";
    case kLargestFree:
      return "largest_free_block";
  }
  return "?";
}

namespace {

// Folds `b` into `a`: the merged column spans both event ranges.
void Merge(Column& a, const Column& b) {
  if (!b.sampled) {
    for (int k = 0; k < kMarkerKinds; ++k) a.markers[k] += b.markers[k];
    return;
  }
  for (int s = 0; s < kSeriesCount; ++s) {
    a.min[s] = a.sampled ? std::min(a.min[s], b.min[s]) : b.min[s];
    a.max[s] = a.sampled ? std::max(a.max[s], b.max[s]) : b.max[s];
  }
  for (int k = 0; k < kMarkerKinds; ++k) a.markers[k] += b.markers[k];
  a.sampled = true;
}

}  // namespace

void Timeline::Halve() {
  std::vector<Column> merged((columns_.size() + 1) / 2);
  for (size_t i = 0; i < columns_.size(); ++i) Merge(merged[i / 2], columns_[i]);
  columns_ = std::move(merged);
  width_ *= 2;
}

Column& Timeline::ColumnFor(uint64_t index) {
  while (index / width_ >= kMaxColumns) Halve();
  const uint64_t c = index / width_;
  if (c >= columns_.size()) columns_.resize(c + 1);
  return columns_[c];
}

void Timeline::Sample(uint64_t index, const std::array<int64_t, kSeriesCount>& values) {
  Column sample;
  sample.sampled = true;
  sample.min = values;
  sample.max = values;
  Merge(ColumnFor(index), sample);
  for (int s = 0; s < kSeriesCount; ++s) peak_[s] = std::max(peak_[s], values[s]);
  events_ = std::max(events_, index + 1);
}

void Timeline::Mark(uint64_t index, MarkerKind kind) { ++ColumnFor(index).markers[kind]; }

}  // namespace hbmsim::sim::viz
