#include "trace/formats/format_table.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "fmt/format.h"
#include "trace/binary/binary_reader.h"
#include "trace/binary/format.h"
#include "trace/csapp/rep_reader.h"
#include "trace/formats/memory_recordings.h"
#include "trace/formats/named_recording.h"
#include "trace/formats/snapshot_recording.h"
#include "trace/formats/stream_recording.h"
#include "trace/io/input_file.h"
#include "trace/pprof/device_profile.h"
#include "trace/rmm/rmm_reader.h"
#include "trace/stalloc/mem_log_reader.h"
#include "trace/text/text_reader.h"
#include "trace/xla/buffer_assignment_text.h"
#include "trace/xla/heap_trace_proto.h"
#include "trace/xla/text_pair.h"
#include "trace/xplane/memory_profile_json.h"
#include "trace/xplane/xspace_reader.h"

namespace hbmsim::trace {
namespace {

// A streamed format's reader, its errors made InvalidArgument.
template <typename Reader>
absl::StatusOr<std::unique_ptr<EventReader>> OpenReader(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  if (!r.ok()) return absl::InvalidArgumentError(r.status().message());
  return std::unique_ptr<EventReader>(*std::move(r));
}

template <typename Reader, TraceFormat kFormat>
absl::StatusOr<std::unique_ptr<Recording>> OpenStream(const std::string& path) {
  return StreamRecording::Open(path, kFormat, &OpenReader<Reader>);
}

bool IsPickle(const FileHead& h) {
  return !h.bytes.empty() && static_cast<unsigned char>(h.bytes[0]) == 0x80;
}
bool IsHbt(const FileHead& h) {
  return h.bytes.starts_with(binary::kMagic) || h.bytes.starts_with(binary::kZstdMagic);
}
// A protobuf has no magic: only a first byte that is a length-delimited field 1-4 is walked further.
bool IsXlaProto(const FileHead& h) {
  const char c = h.bytes.empty() ? 0 : h.bytes[0];
  return (c == 0x0A || c == 0x12 || c == 0x1A || c == 0x22) && xla::LooksLikeXlaProtoFile(h.path);
}
// A profile's XSpace is a protobuf too: its first plane's name tells it from XLA's protos.
bool IsXspace(const FileHead& h) { return xplane::LooksLikeXSpace(h.bytes); }
// gzip is shared with XProf's JSON: the pprof row looks inside first.
bool IsDeviceProfile(const FileHead& h) { return pprof::LooksLikeDeviceProfile(h.path); }
bool IsMemoryProfile(const FileHead& h) { return xplane::LooksLikeMemoryProfileJson(h.bytes); }
bool IsRmm(const FileHead& h) { return h.text.starts_with("Thread,Time,Action"); }
// No text-trace line starts with a digit or holds "->" in its first word.
bool IsXlaText(const FileHead& h) {
  return xla::LooksLikeBufferAssignmentText(h.text) || xla::LooksLikeLiveRangeText(h.text);
}
bool IsRep(const FileHead& h) { return csapp::RepReader::LooksLikeRep(h.text); }
bool IsMemLog(const FileHead& h) { return stalloc::MemLogReader::LooksLikeMemLog(h.text); }
bool Always(const FileHead&) { return true; }

using F = TraceFormat;

// Tried in this order: the first whose sniff says yes opens the file.
constexpr TraceFormatRow kFormats[] = {
    {F::kTorchSnapshot, IsPickle, OpenSnapshotRecording},
    {F::kBinary, IsHbt, OpenStream<BinaryTraceReader, F::kBinary>},
    {F::kXplane, IsXspace, OpenXplaneRecording},
    {F::kJaxDeviceProfile, IsDeviceProfile, OpenDeviceProfileRecording},
    {F::kMemoryProfile, IsMemoryProfile, OpenMemoryProfileRecording},
    {F::kXlaProto, IsXlaProto, OpenXlaProtoRecording},
    {F::kRmmLog, IsRmm, OpenStream<rmm::RmmLogReader, F::kRmmLog>},
    {F::kXlaText, IsXlaText, OpenXlaTextRecording, xla::TextPairPartners},
    {F::kCsappRep, IsRep, OpenStream<csapp::RepReader, F::kCsappRep>},
    {F::kStallocMemLog, IsMemLog, OpenStream<stalloc::MemLogReader, F::kStallocMemLog>},
    {F::kText, Always, OpenStream<TextTraceReader, F::kText>},
};

// Each TraceFormat has exactly one row, so TraceFormatRowOf always finds it.
constexpr bool EveryFormatHasOneRow() {
  for (size_t f = 0; f < kTraceFormatCount; ++f) {
    int rows = 0;
    for (const TraceFormatRow& row : kFormats) rows += static_cast<size_t>(row.format) == f ? 1 : 0;
    if (rows != 1) return false;
  }
  return std::size(kFormats) == kTraceFormatCount;
}
static_assert(EveryFormatHasOneRow(), "each TraceFormat needs exactly one row in kFormats");

}  // namespace

std::span<const TraceFormatRow> TraceFormats() { return kFormats; }

const TraceFormatRow& TraceFormatRowOf(TraceFormat format) {
  for (const TraceFormatRow& row : kFormats) {
    if (row.format == format) return row;
  }
  return kFormats[0];  // not reached: EveryFormatHasOneRow
}

absl::StatusOr<const TraceFormatRow*> DetectTraceFormat(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::InvalidArgumentError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  char head[256] = {};  // room for a mem_log marker or the four .rep header lines
  const size_t n = std::fread(head, 1, sizeof(head), f);
  std::fclose(f);
  const std::string_view bytes(head, n);
  std::string_view text = bytes;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte order mark
  const FileHead h{path, bytes, text};
  for (const TraceFormatRow& row : kFormats) {
    if (row.sniff(h)) return &row;
  }
  return &TraceFormatRowOf(TraceFormat::kText);  // not reached: text's sniff takes anything
}

absl::StatusOr<std::unique_ptr<Recording>> OpenRecording(const std::string& path) {
  // A snapshot the Python module registered (memory_recordings.h).
  if (std::shared_ptr<const PickleTree> tree = FindMemorySnapshot(path)) {
    return OpenSnapshotTreeRecording(path, *tree);
  }
  // A directory or an unreadable path fails here; a pipe is spooled once.
  absl::StatusOr<io::InputFile> opened = io::OpenInputFile(path);
  if (!opened.ok()) return opened.status();
  auto input = std::make_shared<const io::InputFile>(*std::move(opened));
  absl::StatusOr<const TraceFormatRow*> row = DetectTraceFormat(input->path());
  if (!row.ok()) return input->Rename(row.status());
  absl::StatusOr<std::unique_ptr<Recording>> recording = (*row)->open(input->path());
  if (!recording.ok()) return input->Rename(recording.status());
  if (!input->spooled()) return recording;
  return std::unique_ptr<Recording>(std::make_unique<NamedRecording>(input, *std::move(recording)));
}

std::vector<io::NamedPath> WithPartnerFiles(std::vector<io::NamedPath> inputs) {
  const size_t given = inputs.size();
  for (size_t i = 0; i < given; ++i) {
    const io::NamedPath in = inputs[i];  // a copy: push_back below may move the vector
    struct stat st;
    if (in.path.empty() || in.path == "-" || ::stat(in.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      continue;
    absl::StatusOr<const TraceFormatRow*> row = DetectTraceFormat(in.path);
    if (!row.ok() || (*row)->partners == nullptr) continue;
    for (std::string& partner : (*row)->partners(in.path))
      inputs.push_back({in.role + "'s partner", std::move(partner)});
  }
  return inputs;
}

absl::StatusOr<std::unique_ptr<EventReader>> OpenTrace(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Recording>> r = OpenRecording(path);
  if (!r.ok()) return r.status();
  return (*r)->Events(std::nullopt);
}

}  // namespace hbmsim::trace
