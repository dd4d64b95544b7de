#include "trace/formats/stream_recording.h"

#include <sys/stat.h>

#include "fmt/format.h"

namespace hbmsim::trace {
namespace {

// All a stream says before its events: its header.
RecordedFacts HeaderFacts(const EventReader& first) {
  RecordedFacts f;
  f.metadata = first.metadata();
  return f;
}

}  // namespace

StreamRecording::StreamRecording(const std::string& path, TraceFormat format, ReaderOpener opener,
                                 std::unique_ptr<EventReader> first)
    : Recording(path, format, HeaderFacts(*first)), opener_(opener), first_(std::move(first)) {}

absl::StatusOr<std::unique_ptr<Recording>> StreamRecording::Open(const std::string& path, TraceFormat format,
                                                                 ReaderOpener opener) {
  absl::StatusOr<std::unique_ptr<EventReader>> first = opener(path);
  if (!first.ok()) return first.status();
  return std::unique_ptr<Recording>(new StreamRecording(path, format, opener, *std::move(first)));
}

absl::StatusOr<std::unique_ptr<EventReader>> StreamRecording::Events(std::optional<DeviceId>) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (first_) return std::move(first_);
  }
  struct stat st;
  if (::stat(path().c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        fmt::format("{}: not a regular file, so it can be read only once; save it to a file first", path()));
  }
  return opener_(path());
}

}  // namespace hbmsim::trace
