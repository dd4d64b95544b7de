#include "sim/engine/open_trace.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "fmt/format.h"
#include "trace/text/text_reader.h"

namespace hbmsim {

std::string_view TraceFormatName(TraceFormat f) {
  switch (f) {
    case TraceFormat::kText:
      return "text";
    case TraceFormat::kTorchSnapshot:
      return "torch-snapshot";
  }
  return "?";
}

absl::StatusOr<TraceFormat> DetectTraceFormat(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::InvalidArgumentError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  unsigned char magic[2] = {0, 0};
  const size_t n = std::fread(magic, 1, sizeof(magic), f);
  std::fclose(f);
  if (n >= 1 && magic[0] == 0x80) return TraceFormat::kTorchSnapshot;
  return TraceFormat::kText;
}

absl::StatusOr<std::unique_ptr<EventReader>> OpenTrace(const std::string& path) {
  absl::StatusOr<TraceFormat> format = DetectTraceFormat(path);
  if (!format.ok()) return format.status();
  switch (*format) {
    case TraceFormat::kText: {
      absl::StatusOr<std::unique_ptr<TextTraceReader>> r = TextTraceReader::Open(path);
      if (!r.ok()) return absl::InvalidArgumentError(r.status().message());
      return std::unique_ptr<EventReader>(std::move(*r));
    }
    case TraceFormat::kTorchSnapshot:
      break;
  }
  return absl::InvalidArgumentError(
      fmt::format("{}: a PyTorch memory snapshot (pickle); this build has no snapshot reader yet", path));
}

}  // namespace hbmsim
