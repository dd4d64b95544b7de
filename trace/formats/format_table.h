// The one place where trace formats are told apart and a trace path is
// opened. Formats are detected by content, never by file name: each row of
// the table says how its format is recognised from the file's first bytes and
// how it is opened into a Recording; the first row that recognises the head
// wins, and text (tried last) takes anything.
//
//   torch-snapshot   first byte 0x80 (a pickle PROTO opcode)
//   binary           "\x89HBT\r\n\x1a\n" or a zstd frame (trace/binary/format.h)
//   xplane           an XSpace whose first plane is named like a profiler's (trace/xplane)
//   jax-device-profile  gzip whose first decompressed field is a pprof sample_type
//                    (jax.profiler.save_device_memory_profile; trace/pprof)
//   memory-profile   XProf's memory_profile.json, or gzip of it (trace/xplane)
//   xla-proto        a length-delimited protobuf field 1-4 whose top level walks
//                    as one (trace/xla/heap_trace_proto.h)
//   rmm-log          "Thread,Time,Action" (a CSV header; a UTF-8 BOM is skipped)
//   xla-text         "BufferAssignment:", "HloLiveRange (max" (trace/xla)
//   csapp-rep        a first line that is a plain number (trace/csapp)
//   stalloc-mem-log  a first line "1 0x7f.. 512 0" or a marker (trace/stalloc)
//   text             anything else: the text format v1
//
// A new format is an enumerator of TraceFormat (trace/core/trace_format.h),
// one row here and its reader; a static_assert in format_table.cc fails until
// every enumerator has exactly one row. A pipe, a FIFO, `-` or
// /dev/stdin is read once into an unnamed scratch file (trace/io/input_file.h)
// that is then sniffed and read like any file, so every format can be piped
// in and every command can read it more than once; messages name the input
// as the user did (`-` is "<stdin>").
#ifndef HBMSIM_TRACE_FORMATS_FORMAT_TABLE_H_
#define HBMSIM_TRACE_FORMATS_FORMAT_TABLE_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "trace/core/trace_format.h"
#include "trace/formats/recording.h"
#include "trace/io/path_identity.h"

namespace hbmsim::trace {

// The first bytes of a regular file, as the sniffers see them.
struct FileHead {
  const std::string& path;
  std::string_view bytes;  // up to the first 256 bytes
  std::string_view text;   // the same without a leading UTF-8 byte order mark
};

struct TraceFormatRow {
  TraceFormat format;  // its name: TraceFormatName(format)
  bool (*sniff)(const FileHead& head);
  // Errors are InvalidArgument and name the file (and line or offset).
  absl::StatusOr<std::unique_ptr<Recording>> (*open)(const std::string& path);
  // The other files `open` reads beside `path` (an XLA dump's live ranges),
  // or nullptr when it reads only `path`.
  std::vector<std::string> (*partners)(const std::string& path) = nullptr;
};

// Every format, in the order they are tried.
std::span<const TraceFormatRow> TraceFormats();

// The row of `format`.
const TraceFormatRow& TraceFormatRowOf(TraceFormat format);

// The row that recognises `path`, a regular file (OpenRecording spools the
// others). Errors name the file.
absl::StatusOr<const TraceFormatRow*> DetectTraceFormat(const std::string& path);

// Detects and opens `path`. Errors are InvalidArgument and name the file:
// "PATH is a directory", "cannot read PATH: REASON", or the reader's.
absl::StatusOr<std::unique_ptr<Recording>> OpenRecording(const std::string& path);

// `inputs` and, after each recording among them, every file its format reads
// beside it (role "ROLE's partner"): what a command hands io::OutputSet so
// that no output overwrites a file the command reads implicitly. Only regular
// files are sniffed (a pipe must not be read here); other paths pass as they are.
std::vector<io::NamedPath> WithPartnerFiles(std::vector<io::NamedPath> inputs);

// Every event of every device of `path`, in file order (convert and tools
// that stream a whole file once).
absl::StatusOr<std::unique_ptr<EventReader>> OpenTrace(const std::string& path);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_FORMATS_FORMAT_TABLE_H_
