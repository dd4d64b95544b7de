// allocator_settings (gen4+): every key as text, plus the typed knobs a
// simulation of the native allocator needs.
#ifndef HBMSIM_TRACE_TORCH_SETTINGS_PARSE_H_
#define HBMSIM_TRACE_TORCH_SETTINGS_PARSE_H_

#include <cstddef>
#include <string>

#include "trace/pickle/pickle_tree.h"
#include "trace/torch/fields.h"
#include "trace/torch/snapshot.h"

namespace hbmsim::trace {

// `v` as Python's repr() spells it, except that a str at the top level is
// its plain text. Output past `max_chars` is cut and ends with "...", which
// also bounds the work on a memo-bomb value.
std::string PythonText(PickleValue v, size_t max_chars = 4096);

bool ParseAllocatorSettings(FieldReader& r, PickleValue dict, const ValuePath& at, AllocatorSettings& out);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TORCH_SETTINGS_PARSE_H_
