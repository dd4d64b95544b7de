#include "allocator/torch/torch_messages.h"

#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"

namespace hbmsim::allocator::torch {

std::string FormatSize(uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes <= 1024) return fmt::format("{} bytes", bytes);
  if (bytes <= 1048576) return fmt::format("{:.2f} KiB", b / 1024.0);
  if (bytes <= 1073741824ull) return fmt::format("{:.2f} MiB", b / 1048576.0);
  return fmt::format("{:.2f} GiB", b / 1073741824.0);
}

std::string FormatOutOfMemoryMessage(const OomNumbers& n) {
  const std::string allowed_info =
      n.allowed ? fmt::format("{} allowed; ", FormatSize(n.allowed->value())) : "";
  const std::string private_pool_msg =
      n.private_pools.is_zero() ? ""
                                : fmt::format("with {} allocated in private pools (e.g., CUDA Graphs), ",
                                              FormatSize(n.private_pools.value()));
  const Bytes unallocated = n.reserved.SaturatingSub(n.allocated).SaturatingSub(n.private_pools);
  return fmt::format(
      "CUDA out of memory. Tried to allocate {}. GPU {} has a total capacity of {} of which {} is free. "
      "{}Of the allocated memory {} is allocated by PyTorch, {}and {} is reserved by PyTorch but "
      "unallocated. "
      "If reserved but unallocated memory is large try setting "
      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
      "Memory "
      "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
      FormatSize(n.alloc_size.value()), n.device, FormatSize(n.total.value()), FormatSize(n.free.value()),
      allowed_info, FormatSize((n.allocated + n.private_pools).value()), private_pool_msg,
      FormatSize(unallocated.value()));
}

namespace {

// _format_size: integer-truncated, unit chosen by the reference value (the
// `all` row) stepping up once it reaches 768 of the next unit.
std::string SummarySize(int64_t size, int64_t reference) {
  static constexpr std::string_view kUnits[] = {"B  ", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double ref = static_cast<double>(reference);
  int unit = 0;
  while (unit + 1 < 6 && !(ref < 768 * 1024)) {
    ++unit;
    size /= 1024;
    ref /= 1024;
  }
  return fmt::format("{:6d} {}", size, kUnits[unit]);
}

// _format_count: thresholds of 750 K.
std::string SummaryCount(int64_t count, int64_t reference) {
  static constexpr std::string_view kUnits[] = {" ", "K", "M"};
  double ref = static_cast<double>(reference);
  int unit = 0;
  while (unit + 1 < 3 && !(ref < 750 * 1000)) {
    ++unit;
    count /= 1000;
    ref /= 1000;
  }
  return fmt::format("{:7d} {} ", count, kUnits[unit]);
}

using Formatter = std::string (*)(int64_t, int64_t);

std::string Row(std::string_view name, const Stat& s, const Stat& ref, Formatter f) {
  return fmt::format(" {:<21} | {} | {} | {} | {} ", name, f(s.current, ref.current), f(s.peak, ref.peak),
                     f(s.allocated, ref.allocated), f(s.freed, ref.freed));
}

}  // namespace

std::string FormatMemorySummary(const TorchStats& stats, int device, bool abbreviated) {
  struct Metric {
    const StatArray* array;
    std::string_view name;
    Formatter format;
  };
  const Metric metrics[] = {
      {&stats.allocated_bytes, "Allocated memory", SummarySize},
      {&stats.active_bytes, "Active memory", SummarySize},
      {&stats.requested_bytes, "Requested memory", SummarySize},
      {&stats.reserved_bytes, "GPU reserved memory", SummarySize},
      {&stats.inactive_split_bytes, "Non-releasable memory", SummarySize},
      {&stats.allocation, "Allocations", SummaryCount},
      {&stats.active, "Active allocs", SummaryCount},
      {&stats.segment, "GPU reserved segments", SummaryCount},
      {&stats.inactive_split, "Non-releasable allocs", SummaryCount},
  };
  const std::string rule(75, '-');
  const std::string double_rule(75, '=');
  std::vector<std::string> lines;
  lines.push_back(double_rule);
  lines.push_back(fmt::format(" {:16} PyTorch CUDA memory summary, device ID {:<17d} ", "", device));
  lines.push_back(rule);
  lines.push_back(fmt::format("  {:9} CUDA OOMs: {:<12d} | {:6} cudaMalloc retries: {:<8d}  ", "",
                              stats.num_ooms, "", stats.num_alloc_retries));
  lines.push_back(double_rule);
  lines.push_back("        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ");
  for (const Metric& m : metrics) {
    lines.push_back(rule);
    lines.push_back(Row(m.name, m.array->all(), m.array->all(), m.format));
    if (!abbreviated) {
      lines.push_back(Row("      from large pool", m.array->large_pool(), m.array->all(), m.format));
      lines.push_back(Row("      from small pool", m.array->small_pool(), m.array->all(), m.format));
    }
  }
  lines.push_back(rule);
  lines.push_back(
      Row("Oversize allocations", stats.oversize_allocations, stats.oversize_allocations, SummaryCount));
  lines.push_back(rule);
  lines.push_back(
      Row("Oversize GPU segments", stats.oversize_segments, stats.oversize_segments, SummaryCount));
  lines.push_back(double_rule);
  std::string out;
  for (const std::string& line : lines) out += fmt::format("|{}|\n", line);
  return out;
}

}  // namespace hbmsim::allocator::torch
