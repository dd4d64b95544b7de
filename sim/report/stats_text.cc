#include "sim/report/stats_text.h"

#include "fmt/format.h"

namespace hbmsim {

std::string StatsDebugString(const AllocatorStats& s) {
  std::string out;
  auto line = [&](std::string_view label, int64_t v) {
    fmt::format_to(std::back_inserter(out), "{:<18}{:>20}\n", label, v);
  };
  line("Limit:", s.bytes_limit.value_or(0));
  line("InUse:", s.bytes_in_use);
  line("MaxInUse:", s.peak_bytes_in_use);
  line("NumAllocs:", s.num_allocs);
  line("MaxAllocSize:", s.largest_alloc_size);
  line("Reserved:", s.bytes_reserved);
  line("PeakReserved:", s.peak_bytes_reserved);
  line("LargestFreeBlock:", s.largest_free_block_bytes);
  return out;
}

}  // namespace hbmsim
