#include "sim/dumps/failure_texts.h"

#include "allocator/torch/torch_messages.h"
#include "allocator/tpu/tpu_messages.h"
#include "fmt/format.h"
#include "sim/dumps/bfc_dump.h"
#include "sim/dumps/memory_map_text.h"
#include "trace/core/human_bytes.h"

namespace hbmsim {

std::string BfcFailureText(const BfcAllocator& bfc, const FailureRecord& f) {
  // REF's header without the op name (a trace does not say which op asked).
  return fmt::format("Allocator ({}) ran out of memory trying to allocate {} (rounded to {})\n{}", bfc.name(),
                     HumanReadableNumBytes(f.requested), f.rounded.value(),
                     BfcDumpMemoryLog(bfc, bfc.name(), f.rounded));
}

std::string TorchFailureText(const torch::TorchAllocator& t, const FailureRecord&) {
  std::string text;
  if (t.last_oom()) text = torch::FormatOutOfMemoryMessage(*t.last_oom()) + "\n";
  return text + torch::FormatMemorySummary(t.torch_stats(), t.options().device_index) + "\n" +
         MemoryMapText(t);
}

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

std::string GenericFailureText(const Allocator& a, const FailureRecord&) { return MemoryMapText(a); }

}  // namespace hbmsim
