#include "allocator/tpu/tpu_messages.h"

#include <array>

#include "fmt/format.h"

namespace hbmsim::allocator {
namespace {

std::string ShapeText(const TpuBufferInfo& b) { return b.shape ? FormatShape(*b.shape) : "-"; }

}  // namespace

std::string FormatTpuSize(Bytes b) {
  constexpr std::array<char, 4> kUnits = {'K', 'M', 'G', 'T'};
  const uint64_t v = b.value();
  if (v < 1024) return fmt::format("{}B", v);
  size_t unit = 0;
  long double scale = 1024.0L;
  while (unit + 1 < kUnits.size() && v >= static_cast<uint64_t>(scale * 1024.0L)) {
    ++unit;
    scale *= 1024.0L;
  }
  return fmt::format("{:.2f}{}", static_cast<double>(static_cast<long double>(v) / scale), kUnits[unit]);
}

std::string FormatBufferAllocationError(Bytes rounded, Bytes free_bytes, std::string_view memory_space) {
  return fmt::format(
      "RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate {}. That was not possible. "
      "There are {} free.; ({})",
      FormatTpuSize(rounded), FormatTpuSize(free_bytes), memory_space);
}

std::string FormatProgramLoadError(std::string_view program, Bytes reserve, Bytes free_bytes, Bytes reserved,
                                   Bytes reservable) {
  return fmt::format(
      "RESOURCE_EXHAUSTED: Error loading program '{}': Attempting to reserve {} at the bottom of memory. "
      "That "
      "was not possible. There are {} free, {} reserved, and {} reservable.",
      program, FormatTpuSize(reserve), FormatTpuSize(free_bytes), FormatTpuSize(reserved),
      FormatTpuSize(reservable));
}

std::string FormatAllocationDump(const TpuOomSnapshot& s) {
  std::string out = fmt::format(
      "tpu_log_allocations_on_oom: event {}: {} {} needs {} ({} B); {} free, largest request that fits {}\n",
      s.event.value(), s.program_load ? "program" : "buffer", s.id, FormatTpuSize(s.rounded),
      s.rounded.value(), FormatTpuSize(s.free_bytes), FormatTpuSize(s.largest_free_block));
  Bytes padded_total;
  Bytes requested_total;
  for (const TpuBufferInfo& b : s.buffers) {
    padded_total += b.padded;
    requested_total += b.requested;
  }
  out += fmt::format("live buffers: {} holding {} ({} requested, {} padding)\n", s.buffers.size(),
                     FormatTpuSize(padded_total), FormatTpuSize(requested_total),
                     FormatTpuSize(padded_total - requested_total));
  for (const TpuBufferInfo& b : s.buffers) {
    out += fmt::format("  buffer {} shape={} padded={} ({} B) requested={} B address={:#x}{}\n", b.id.value(),
                       ShapeText(b), FormatTpuSize(b.padded), b.padded.value(), b.requested.value(),
                       b.offset.value(), b.queued_free ? " queued_free" : "");
  }
  Bytes reserved;
  for (const TpuProgramInfo& p : s.programs) reserved += p.size;
  out += fmt::format("resident programs: {} reserving {}\n", s.programs.size(), FormatTpuSize(reserved));
  for (const TpuProgramInfo& p : s.programs) {
    out += fmt::format("  program {} size={} ({} B) address={:#x}{}\n", p.id.value(), FormatTpuSize(p.size),
                       p.size.value(), p.offset.value(), p.protected_from_eviction ? " running" : "");
  }
  return out;
}

}  // namespace hbmsim::allocator
