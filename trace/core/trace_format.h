// The formats hbmsim reads, as values: a recording says which one it is
// (Recording::format()), and a policy names the ones its runtime writes
// (RecordingHooks::made_formats) with these, so a misspelt format is a compile
// error rather than a row that silently claims nothing. How each format is
// recognised and opened is its row in trace/formats/format_table.cc; this
// header is only the names, so sim/config can use them without linking every
// reader.
#ifndef HBMSIM_TRACE_CORE_TRACE_FORMAT_H_
#define HBMSIM_TRACE_CORE_TRACE_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace hbmsim::trace {

enum class TraceFormat : uint8_t {
  kTorchSnapshot,     // torch.cuda.memory._snapshot() pickle
  kBinary,            // hbmsim's .hbt (trace/binary)
  kXplane,            // a TF/JAX profiler XSpace
  kJaxDeviceProfile,  // jax.profiler.save_device_memory_profile (pprof)
  kMemoryProfile,     // XProf's memory_profile.json
  kXlaProto,          // XLA's HeapSimulatorTrace / BufferAssignment proto
  kRmmLog,            // RMM's logging_resource_adaptor CSV
  kXlaText,           // XLA's buffer-assignment and live-range text dumps
  kCsappRep,          // CS:APP malloc lab .rep
  kStallocMemLog,     // STAlloc's mem_log
  kText,              // the text format v1; keep it the last enumerator
};

// How many formats there are (the enumerators above, kText being the last).
inline constexpr size_t kTraceFormatCount = static_cast<size_t>(TraceFormat::kText) + 1;

// The name reports, messages and --json print: "torch-snapshot", "text", ...
std::string_view TraceFormatName(TraceFormat format);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_CORE_TRACE_FORMAT_H_
