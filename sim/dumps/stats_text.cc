#include "sim/dumps/stats_text.h"

#include <iterator>
#include <string_view>

#include "fmt/format.h"
#include "trace/core/human_bytes.h"

namespace hbmsim {
namespace {

using Out = std::back_insert_iterator<std::string>;

void Line(Out out, std::string_view label, const std::string& value) {
  fmt::format_to(out, "  {:<36}{:>32}\n", label, value);
}

}  // namespace

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

// The keys people read first in torch.cuda.memory_stats(), each with PyTorch's
// meaning; the full sorted list follows in the report's counters.
std::string TorchStatsText(const torch::TorchAllocator& t) {
  const torch::TorchStats& s = t.torch_stats();
  const AllocatorStats st = t.GetStats();
  std::string text = "\nStats at the end of the replay (torch.cuda.memory_stats() names):\n";
  Out out(text);
  Line(out, "reserved_bytes.all.current", StatBytesText(s.reserved_bytes.all().current));
  Line(out, "reserved_bytes.all.peak", StatBytesText(s.reserved_bytes.all().peak));
  Line(out, "allocated_bytes.all.current", StatBytesText(s.allocated_bytes.all().current));
  Line(out, "allocated_bytes.all.peak", StatBytesText(s.allocated_bytes.all().peak));
  Line(out, "active_bytes.all.current", StatBytesText(s.active_bytes.all().current));
  Line(out, "active_bytes.all.peak", StatBytesText(s.active_bytes.all().peak));
  Line(out, "inactive_split_bytes.all.current", StatBytesText(s.inactive_split_bytes.all().current));
  Line(out, "requested_bytes.all.current", StatBytesText(s.requested_bytes.all().current));
  Line(out, "requested_bytes.all.peak", StatBytesText(s.requested_bytes.all().peak));
  Line(out, "segment.all.current", StatValueText(s.segment.all().current));
  Line(out, "allocation.all.current", StatValueText(s.allocation.all().current));
  Line(out, "num_alloc_retries", StatValueText(s.num_alloc_retries));
  Line(out, "num_ooms", StatValueText(s.num_ooms));
  Line(out, "max_split_size", s.max_split_size < 0 ? "unlimited" : StatBytesText(s.max_split_size));
  fmt::format_to(out, "and hbmsim's:\n");
  Line(out, "device capacity (limit)", StatBytesText(st.bytes_limit.value_or(kUnlimitedStat)));
  Line(out, "largest request that fits now", StatBytesText(st.largest_free_block_bytes));
  return text;
}

}  // namespace hbmsim
