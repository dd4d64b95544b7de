#include "sim/engine/open_trace.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "fmt/format.h"
#include "trace/binary/binary_reader.h"
#include "trace/binary/format.h"
#include "trace/csapp/rep_reader.h"
#include "trace/io/named_reader.h"
#include "trace/rmm/rmm_reader.h"
#include "trace/stalloc/mem_log_reader.h"
#include "trace/text/text_reader.h"
#include "trace/torch/snapshot_events.h"
#include "trace/xla/buffer_assignment_text.h"
#include "trace/xla/heap_trace_proto.h"
#include "trace/xla/text_pair.h"

namespace hbmsim {

std::string_view TraceFormatName(TraceFormat f) {
  switch (f) {
    case TraceFormat::kText:
      return "text";
    case TraceFormat::kTorchSnapshot:
      return "torch-snapshot";
    case TraceFormat::kRmmLog:
      return "rmm-log";
    case TraceFormat::kBinary:
      return "binary";
    case TraceFormat::kStallocMemLog:
      return "stalloc-mem-log";
    case TraceFormat::kCsappRep:
      return "csapp-rep";
    case TraceFormat::kXlaText:
      return "xla-text";
    case TraceFormat::kXlaProto:
      return "xla-proto";
  }
  return "?";
}

absl::StatusOr<TraceFormat> DetectTraceFormat(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::InvalidArgumentError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  char head[256] = {};  // room for a mem_log marker or the four .rep header lines
  const size_t n = std::fread(head, 1, sizeof(head), f);
  std::fclose(f);
  std::string_view start(head, n);
  if (!start.empty() && static_cast<unsigned char>(start[0]) == 0x80) return TraceFormat::kTorchSnapshot;
  if (start.starts_with(hbt::kMagic) || start.starts_with(hbt::kZstdMagic)) return TraceFormat::kBinary;
  // A protobuf has no magic: only a first byte that is a length-delimited field 1-4 is walked further.
  if (!start.empty() && (start[0] == 0x0A || start[0] == 0x12 || start[0] == 0x1A || start[0] == 0x22) &&
      xla::LooksLikeXlaProtoFile(path)) {
    return TraceFormat::kXlaProto;
  }
  if (start.substr(0, 3) == "\xEF\xBB\xBF") start.remove_prefix(3);  // a UTF-8 byte order mark
  if (start.substr(0, 18) == "Thread,Time,Action") return TraceFormat::kRmmLog;
  // No text-trace line starts with a digit or holds "->" in its first word.
  if (xla::LooksLikeBufferAssignmentText(start) || xla::LooksLikeLiveRangeText(start))
    return TraceFormat::kXlaText;
  if (csapp::RepReader::LooksLikeRep(start)) return TraceFormat::kCsappRep;
  if (stalloc::MemLogReader::LooksLikeMemLog(start)) return TraceFormat::kStallocMemLog;
  return TraceFormat::kText;
}

namespace {

absl::StatusOr<std::unique_ptr<EventReader>> OpenTraceAt(const std::string& path) {
  absl::StatusOr<TraceFormat> format = DetectTraceFormat(path);
  if (!format.ok()) return format.status();
  switch (*format) {
    case TraceFormat::kText: {
      absl::StatusOr<std::unique_ptr<TextTraceReader>> r = TextTraceReader::Open(path);
      if (!r.ok()) return absl::InvalidArgumentError(r.status().message());
      return std::unique_ptr<EventReader>(std::move(*r));
    }
    case TraceFormat::kRmmLog: {
      absl::StatusOr<std::unique_ptr<rmm::RmmLogReader>> r = rmm::RmmLogReader::Open(path);
      if (!r.ok()) return absl::InvalidArgumentError(r.status().message());
      return std::unique_ptr<EventReader>(std::move(*r));
    }
    case TraceFormat::kBinary: {
      absl::StatusOr<std::unique_ptr<BinaryTraceReader>> r = BinaryTraceReader::Open(path);
      if (!r.ok()) return absl::InvalidArgumentError(r.status().message());
      return std::unique_ptr<EventReader>(std::move(*r));
    }
    case TraceFormat::kStallocMemLog: {
      absl::StatusOr<std::unique_ptr<stalloc::MemLogReader>> r = stalloc::MemLogReader::Open(path);
      if (!r.ok()) return absl::InvalidArgumentError(r.status().message());
      return std::unique_ptr<EventReader>(std::move(*r));
    }
    case TraceFormat::kXlaText:
    case TraceFormat::kXlaProto: {
      // Whole-program artifacts: read at once, then served event by event.
      absl::StatusOr<xla::XlaTrace> t = *format == TraceFormat::kXlaText
                                            ? xla::ReadTextPairFiles(path)
                                            : xla::ReadHeapSimulatorProtoFile(path);
      if (!t.ok()) return absl::InvalidArgumentError(t.status().message());
      return std::unique_ptr<EventReader>(std::make_unique<xla::XlaEventReader>(std::move(*t)));
    }
    case TraceFormat::kCsappRep: {
      absl::StatusOr<std::unique_ptr<csapp::RepReader>> r = csapp::RepReader::Open(path);
      if (!r.ok()) return absl::InvalidArgumentError(r.status().message());
      return std::unique_ptr<EventReader>(std::move(*r));
    }
    case TraceFormat::kTorchSnapshot: {
      // Every device with a trace, each starting with its live blocks (tag=preexisting).
      absl::StatusOr<std::unique_ptr<SnapshotEventReader>> r = SnapshotEventReader::Open(path);
      if (!r.ok()) return absl::InvalidArgumentError(r.status().message());
      return std::unique_ptr<EventReader>(std::move(*r));
    }
  }
  return absl::InvalidArgumentError(fmt::format("{}: unknown trace format", path));
}

}  // namespace

absl::StatusOr<std::unique_ptr<EventReader>> OpenTrace(const std::string& path) {
  absl::StatusOr<io::InputFile> input = io::OpenInputFile(path);
  if (!input.ok()) return input.status();
  return OpenTrace(*std::move(input));
}

absl::StatusOr<std::unique_ptr<EventReader>> OpenTrace(io::InputFile input) {
  absl::StatusOr<std::unique_ptr<EventReader>> reader = OpenTraceAt(input.path());
  if (!reader.ok()) return input.Rename(reader.status());
  if (!input.spooled()) return reader;
  return std::unique_ptr<EventReader>(std::make_unique<io::NamedReader>(std::move(input), *std::move(reader)));
}

}  // namespace hbmsim
