#include "sim/policies/torch/torch_texts.h"

#include <iterator>
#include <string_view>

#include "allocator/torch/torch_messages.h"
#include "fmt/format.h"
#include "sim/dumps/memory_map_text.h"
#include "sim/dumps/stats_text.h"
#include "sim/layer.h"

namespace hbmsim::sim {
namespace {

using TorchStatsOut = std::back_insert_iterator<std::string>;

void StatLine(TorchStatsOut out, std::string_view label, const std::string& value) {
  fmt::format_to(out, "  {:<36}{:>32}\n", label, value);
}

}  // namespace

std::string TorchFailureText(const torch::TorchAllocator& t, const FailureRecord&) {
  std::string text;
  if (t.last_oom()) text = torch::FormatOutOfMemoryMessage(*t.last_oom()) + "\n";
  return text + torch::FormatMemorySummary(t.torch_stats(), t.options().device_index) + "\n" +
         MemoryMapText(t);
}

// The full sorted list of memory_stats() follows in the report's counters.
std::string TorchStatsText(const torch::TorchAllocator& t) {
  const torch::TorchStats& s = t.torch_stats();
  const AllocatorStats st = t.GetStats();
  std::string text = "\nStats at the end of the replay (torch.cuda.memory_stats() names):\n";
  TorchStatsOut out(text);
  StatLine(out, "reserved_bytes.all.current", StatBytesText(s.reserved_bytes.all().current));
  StatLine(out, "reserved_bytes.all.peak", StatBytesText(s.reserved_bytes.all().peak));
  StatLine(out, "allocated_bytes.all.current", StatBytesText(s.allocated_bytes.all().current));
  StatLine(out, "allocated_bytes.all.peak", StatBytesText(s.allocated_bytes.all().peak));
  StatLine(out, "active_bytes.all.current", StatBytesText(s.active_bytes.all().current));
  StatLine(out, "active_bytes.all.peak", StatBytesText(s.active_bytes.all().peak));
  StatLine(out, "inactive_split_bytes.all.current", StatBytesText(s.inactive_split_bytes.all().current));
  StatLine(out, "requested_bytes.all.current", StatBytesText(s.requested_bytes.all().current));
  StatLine(out, "requested_bytes.all.peak", StatBytesText(s.requested_bytes.all().peak));
  StatLine(out, "segment.all.current", StatValueText(s.segment.all().current));
  StatLine(out, "allocation.all.current", StatValueText(s.allocation.all().current));
  StatLine(out, "num_alloc_retries", StatValueText(s.num_alloc_retries));
  StatLine(out, "num_ooms", StatValueText(s.num_ooms));
  StatLine(out, "max_split_size", s.max_split_size < 0 ? "unlimited" : StatBytesText(s.max_split_size));
  fmt::format_to(out, "and hbmsim's:\n");
  StatLine(out, "device capacity (limit)", StatBytesText(st.bytes_limit.value_or(kUnlimitedStat)));
  StatLine(out, "largest request that fits now", StatBytesText(st.largest_free_block_bytes));
  return text;
}

}  // namespace hbmsim::sim
