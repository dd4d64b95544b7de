#include "allocator/torch/torch_stats.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"

namespace hbmsim::allocator::torch {
namespace {

void AppendStat(std::string_view prefix, const Stat& s, Counters& out) {
  out.push_back({fmt::format("{}.allocated", prefix), s.allocated});
  out.push_back({fmt::format("{}.current", prefix), s.current});
  out.push_back({fmt::format("{}.freed", prefix), s.freed});
  out.push_back({fmt::format("{}.peak", prefix), s.peak});
}

void AppendArray(std::string_view name, const StatArray& a, Counters& out) {
  AppendStat(fmt::format("{}.all", name), a.all(), out);
  AppendStat(fmt::format("{}.large_pool", name), a.large_pool(), out);
  AppendStat(fmt::format("{}.small_pool", name), a.small_pool(), out);
}

}  // namespace

void AppendTorchCounters(const TorchStats& s, Counters& out) {
  // Built in any order, then sorted by key as memory_stats() returns them.
  Counters keys;
  AppendArray("active", s.active, keys);
  AppendArray("active_bytes", s.active_bytes, keys);
  AppendArray("allocated_bytes", s.allocated_bytes, keys);
  AppendArray("allocation", s.allocation, keys);
  AppendArray("inactive_split", s.inactive_split, keys);
  AppendArray("inactive_split_bytes", s.inactive_split_bytes, keys);
  AppendArray("requested_bytes", s.requested_bytes, keys);
  AppendArray("reserved_bytes", s.reserved_bytes, keys);
  AppendArray("segment", s.segment, keys);
  AppendStat("oversize_allocations", s.oversize_allocations, keys);
  AppendStat("oversize_segments", s.oversize_segments, keys);
  // memory_stats() says -1 for "unset"; reports print kUnlimitedStat as unlimited.
  keys.push_back({"max_split_size", s.max_split_size < 0 ? kUnlimitedStat : s.max_split_size});
  keys.push_back({"num_alloc_retries", s.num_alloc_retries});
  keys.push_back({"num_device_alloc", s.num_device_alloc});
  keys.push_back({"num_device_free", s.num_device_free});
  keys.push_back({"num_ooms", s.num_ooms});
  keys.push_back({"num_sync_all_streams", s.num_sync_all_streams});
  std::sort(keys.begin(), keys.end(), [](const Counter& a, const Counter& b) { return a.name < b.name; });
  out.insert(out.end(), keys.begin(), keys.end());
}

}  // namespace hbmsim::allocator::torch
