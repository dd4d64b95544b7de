#include "sim/policies/tpu/tpu_texts.h"

#include "allocator/tpu/tpu_messages.h"
#include "fmt/format.h"
#include "sim/dumps/memory_map_text.h"
#include "sim/layer.h"

namespace hbmsim::sim {

std::string TpuFailureText(const TpuAllocator& tpu, const FailureRecord& f) {
  std::string text;
  if (f.event_kind == EventKind::kAlloc) {
    text = FormatBufferAllocationError(f.rounded, f.free_bytes);
  } else {
    // For program failures the engine records the reservable bytes as the largest block.
    text = FormatProgramLoadError(fmt::format("{}", f.id), f.rounded, f.free_bytes,
                                  Bytes(static_cast<uint64_t>(tpu.GetStats().bytes_reserved)),
                                  f.largest_free_block_bytes);
  }
  text += "\n";
  if (!tpu.oom_snapshots().empty()) text += FormatAllocationDump(tpu.oom_snapshots().back()) + "\n";
  return text + MemoryMapText(tpu);
}

}  // namespace hbmsim::sim
