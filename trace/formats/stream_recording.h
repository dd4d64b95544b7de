// A Recording of a format read as a stream (text, .hbt, RMM, STAlloc, CS:APP):
// its facts are what its header says (metadata), nothing about devices until
// every event is read. The reader opened to check the header serves the first
// Events() call, so a pipe is read once; later calls open the file again.
#ifndef HBMSIM_TRACE_FORMATS_STREAM_RECORDING_H_
#define HBMSIM_TRACE_FORMATS_STREAM_RECORDING_H_

#include <memory>
#include <mutex>
#include <string>

#include "trace/formats/recording.h"

namespace hbmsim::trace {

using ReaderOpener = absl::StatusOr<std::unique_ptr<EventReader>> (*)(const std::string& path);

class StreamRecording final : public Recording {
 public:
  // Opens `path` once with `opener` (header errors surface here).
  static absl::StatusOr<std::unique_ptr<Recording>> Open(const std::string& path, TraceFormat format,
                                                         ReaderOpener opener);

  absl::StatusOr<std::unique_ptr<EventReader>> Events(std::optional<DeviceId> device) const override;

 private:
  StreamRecording(const std::string& path, TraceFormat format, ReaderOpener opener,
                  std::unique_ptr<EventReader> first);

  ReaderOpener opener_;
  mutable std::mutex mu_;
  mutable std::unique_ptr<EventReader> first_;  // handed out once, by the first Events()
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_FORMATS_STREAM_RECORDING_H_
