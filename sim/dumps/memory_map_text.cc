#include "sim/dumps/memory_map_text.h"

#include <iterator>

#include "fmt/format.h"
#include "sim/dumps/memory_snapshot.h"

namespace hbmsim::sim {
namespace {

std::string_view StateLabel(BlockState s) {
  switch (s) {
    case BlockState::kFree:
      return "Free";
    case BlockState::kInUse:
      return "InUse";
    case BlockState::kPendingFree:
      return "Pending";
    case BlockState::kProgram:
      return "Program";
    case BlockState::kUnmapped:
      return "Unmapped";
  }
  return "?";
}

}  // namespace

std::string MemoryMapText(const Allocator& a) {
  const std::vector<RegionSnapshot> regions = TakeMemorySnapshot(a);
  std::string text;
  auto out = std::back_inserter(text);
  fmt::format_to(out, "Memory map of {}: {} region{}\n", a.name(), regions.size(),
                 regions.size() == 1 ? "" : "s");
  for (const RegionSnapshot& r : regions) {
    fmt::format_to(out, "Region {} at {:x} of size {}\n", r.region.index, r.region.base.value(),
                   r.region.size.value());
    for (const BlockInfo& b : r.blocks) {
      fmt::format_to(out, "  {:<8} at {:x} of size {}", StateLabel(b.state), b.offset.value(),
                     b.size.value());
      if (b.state == BlockState::kInUse || b.state == BlockState::kPendingFree) {
        fmt::format_to(out, " requested {} id {}", b.requested.value(), b.id);
      } else if (b.state == BlockState::kProgram) {
        fmt::format_to(out, " program {}", b.id);
      }
      fmt::format_to(out, "\n");
    }
  }
  return text;
}

}  // namespace hbmsim::sim
