#include "sim/dumps/stats_text.h"

#include <iterator>
#include <string_view>

#include "fmt/format.h"
#include "sim/layer.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim {

std::string StatValueText(int64_t v) { return IsUnlimitedStat(v) ? "unlimited" : fmt::format("{}", v); }

std::string StatBytesText(int64_t v) {
  if (IsUnlimitedStat(v)) return "unlimited";
  return fmt::format("{} ({})", v, HumanReadableNumBytes(v));
}

std::string StatsDebugString(const AllocatorStats& s) {
  std::string out;
  auto line = [&](std::string_view label, int64_t v) {
    fmt::format_to(std::back_inserter(out), "{:<18}{:>20}\n", label, StatValueText(v));
  };
  line("Limit:", s.bytes_limit.value_or(kUnlimitedStat));
  line("InUse:", s.bytes_in_use);
  line("MaxInUse:", s.peak_bytes_in_use);
  line("NumAllocs:", s.num_allocs);
  line("MaxAllocSize:", s.largest_alloc_size);
  line("Reserved:", s.bytes_reserved);
  line("PeakReserved:", s.peak_bytes_reserved);
  line("LargestFreeBlock:", s.largest_free_block_bytes);
  return out;
}

std::string TensorFlowStatsText(const Allocator& a) {
  const AllocatorStats st = a.GetStats();
  std::string out = "\nStats at the end of the replay (TensorFlow/JAX AllocatorStats names):\n";
  out += StatsDebugString(st);
  if (st.pool_bytes) fmt::format_to(std::back_inserter(out), "{:<18}{:>20}\n", "PoolBytes:", *st.pool_bytes);
  if (st.peak_pool_bytes) {
    fmt::format_to(std::back_inserter(out), "{:<18}{:>20}\n", "PeakPoolBytes:", *st.peak_pool_bytes);
  }
  return out;
}

}  // namespace hbmsim::sim
