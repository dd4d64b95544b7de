#include "sim/dumps/failure_texts.h"

#include "sim/dumps/memory_map_text.h"

namespace hbmsim::sim {

std::string GenericFailureText(const Allocator& a, const FailureRecord&) { return MemoryMapText(a); }

}  // namespace hbmsim::sim
