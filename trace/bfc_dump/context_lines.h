// Lines around a BFC dump that say what the dump itself does not: the device's
// memory limit ("Created device ... with N MB memory") and the shape of the
// tensor whose allocation failed ("OOM when allocating tensor with shape[...]").
// Same conventions as line_parsers.h: the message without the logger prefix.
#ifndef HBMSIM_TRACE_BFC_DUMP_CONTEXT_LINES_H_
#define HBMSIM_TRACE_BFC_DUMP_CONTEXT_LINES_H_

#include <optional>
#include <string_view>

#include "trace/bfc_dump/dump.h"

namespace hbmsim::trace::bfc_dump {

// TF 2.0-2.4 "Created TensorFlow device (/job:.../device:GPU:0 with 67 MB
// memory) -> physical GPU (...)" and TF >= 2.5 "Created device
// /job:.../device:GPU:0 with 3340 MB memory:  -> device: 0, ...".
std::optional<DeviceCreated> MatchDeviceCreated(std::string_view msg);

// "... OOM when allocating tensor with shape[32,30,30,1] and type float on
// /job:.../device:GPU:0 by allocator GPU_0_bfc", anywhere in the line.
std::optional<TensorOom> MatchTensorOom(std::string_view msg);

// Bytes per element of a TF dtype name as the OOM line prints it ("float",
// "half", "bfloat16", "int64", ...); nullopt for names we do not know.
std::optional<uint64_t> DtypeBytes(std::string_view dtype);

}  // namespace hbmsim::trace::bfc_dump

#endif  // HBMSIM_TRACE_BFC_DUMP_CONTEXT_LINES_H_
