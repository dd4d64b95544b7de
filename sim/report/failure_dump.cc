#include "sim/report/failure_dump.h"

#include "allocator/bfc/bfc_allocator.h"
#include "allocator/torch/torch_allocator.h"
#include "allocator/torch/torch_messages.h"
#include "allocator/tpu/tpu_allocator.h"
#include "allocator/tpu/tpu_messages.h"
#include "fmt/format.h"
#include "sim/report/bfc_dump.h"
#include "sim/report/memory_map_text.h"
#include "trace/core/human_bytes.h"

namespace hbmsim {
namespace {

std::string BfcFailure(const BfcAllocator& bfc, const FailureRecord& f) {
  // REF's header without the op name (a trace does not say which op asked).
  return fmt::format("Allocator ({}) ran out of memory trying to allocate {} (rounded to {})\n{}", bfc.name(),
                     HumanReadableNumBytes(f.requested), f.rounded.value(),
                     BfcDumpMemoryLog(bfc, bfc.name(), f.rounded));
}

std::string TorchFailure(const torch::TorchAllocator& t) {
  std::string text;
  if (t.last_oom()) text = torch::FormatOutOfMemoryMessage(*t.last_oom()) + "\n";
  return text + torch::FormatMemorySummary(t.torch_stats(), t.options().device_index) + "\n" +
         MemoryMapText(t);
}

std::string TpuFailure(const TpuAllocator& tpu, const FailureRecord& f) {
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

}  // namespace

std::string MemoryDumpAtFailure(const Allocator& a, const FailureRecord& f) {
  if (const auto* bfc = dynamic_cast<const BfcAllocator*>(&a)) return BfcFailure(*bfc, f);
  if (const auto* t = dynamic_cast<const torch::TorchAllocator*>(&a)) return TorchFailure(*t);
  if (const auto* tpu = dynamic_cast<const TpuAllocator*>(&a)) return TpuFailure(*tpu, f);
  return MemoryMapText(a);
}

}  // namespace hbmsim
