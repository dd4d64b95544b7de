// The one place where trace formats are told apart. Formats are detected by
// content, never by file name:
//
//   first byte 0x80 (a pickle PROTO opcode)  → PyTorch memory snapshot
//   "Thread,Time,Action" (a CSV header)      → RAPIDS RMM logging_resource_adaptor log
//   "\x89HBT\r\n\x1a\n" or a zstd frame      → the .hbt binary trace (trace/binary/format.h)
//   a first line "1 0x7f.. 512 0" or a marker → STAlloc mem_log (trace/stalloc)
//   a first line that is a plain number      → CS:APP Malloc Lab .rep (trace/csapp)
//   "BufferAssignment:", "HloLiveRange (max" → XLA buffer-assignment + live-range text (trace/xla)
//   protobuf fields 1-4 (heap_trace_proto.h) → XLA BufferAssignmentProto / HloProto (trace/xla)
//   anything else                            → the text format v1
//
// A new format adds a test on its magic bytes here and nothing else. Pipes,
// FIFOs, `-` and /dev/stdin are spooled once (trace/io/input_file.h) and then
// sniffed and read like a file, so every format can be piped in.
#ifndef HBMSIM_SIM_ENGINE_OPEN_TRACE_H_
#define HBMSIM_SIM_ENGINE_OPEN_TRACE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "trace/core/reader.h"
#include "trace/io/input_file.h"

namespace hbmsim {

enum class TraceFormat : uint8_t {
  kText,
  kTorchSnapshot,
  kRmmLog,
  kBinary,
  kStallocMemLog,
  kCsappRep,
  kXlaText,
  kXlaProto,
};
// "text", "torch-snapshot", "rmm-log", "binary", "stalloc-mem-log", "csapp-rep", "xla-text", "xla-proto"
std::string_view TraceFormatName(TraceFormat f);

// Looks at the first bytes of `path` (a regular file: see OpenInputFile). Errors name the file.
absl::StatusOr<TraceFormat> DetectTraceFormat(const std::string& path);

// Opens `path` with the reader for its format. Errors are InvalidArgument and
// name the file (and line, for header errors).
absl::StatusOr<std::unique_ptr<EventReader>> OpenTrace(const std::string& path);
// The same for an input opened already (a command that also sniffs it or
// checks it against its outputs opens it once).
absl::StatusOr<std::unique_ptr<EventReader>> OpenTrace(io::InputFile input);

}  // namespace hbmsim

#endif  // HBMSIM_SIM_ENGINE_OPEN_TRACE_H_
