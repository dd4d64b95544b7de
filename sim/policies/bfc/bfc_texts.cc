#include "sim/policies/bfc/bfc_texts.h"

#include "fmt/format.h"
#include "sim/layer.h"
#include "sim/policies/bfc/bfc_dump.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim {

std::string BfcFailureText(const BfcAllocator& bfc, const FailureRecord& f) {
  // REF's header without the op name (a trace does not say which op asked).
  return fmt::format("Allocator ({}) ran out of memory trying to allocate {} (rounded to {})\n{}", bfc.name(),
                     HumanReadableNumBytes(f.requested), f.rounded.value(),
                     BfcDumpMemoryLog(bfc, bfc.name(), f.rounded));
}

}  // namespace hbmsim::sim
