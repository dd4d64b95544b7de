// A Recording read from a spooled input (a pipe, a FIFO, `-`, /dev/stdin:
// trace/io/input_file.h): forwards everything to the format's own Recording,
// opened on /proc/self/fd/N, and puts the user's name for the input back into
// its path and every message. It holds the scratch file open, so every
// Events() call (a `size` search reads the recording once per trial) reads it
// again from the start, although the pipe itself was read once.
#ifndef HBMSIM_TRACE_FORMATS_NAMED_RECORDING_H_
#define HBMSIM_TRACE_FORMATS_NAMED_RECORDING_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "trace/formats/recording.h"
#include "trace/io/input_file.h"
#include "trace/io/named_reader.h"

namespace hbmsim {

class NamedRecording final : public Recording {
 public:
  NamedRecording(std::shared_ptr<const io::InputFile> input, std::unique_ptr<Recording> inner)
      : Recording(input->name(), inner->format()),
        input_(std::move(input)),
        inner_(std::move(inner)),
        metadata_(io::RenamedMetadata(*input_, inner_->metadata())) {}

  const TraceMetadata& metadata() const override { return metadata_; }
  std::optional<std::vector<DeviceEvents>> devices() const override { return inner_->devices(); }
  bool records_side_entries() const override { return inner_->records_side_entries(); }
  std::vector<StartSegment> StartState(DeviceId d) const override { return inner_->StartState(d); }
  std::optional<StartSummary> StartStateSummary(DeviceId d) const override { return inner_->StartStateSummary(d); }
  std::optional<OomCapacity> RecordedOom(DeviceId d) const override { return inner_->RecordedOom(d); }
  std::optional<RecordedSettings> settings() const override { return inner_->settings(); }
  HistoryAddresses FinalHistory(DeviceId d) const override { return inner_->FinalHistory(d); }
  const HeldState* held_state() const override { return inner_->held_state(); }
  std::string Describe() const override { return input_->Rename(inner_->Describe()); }

  absl::StatusOr<std::unique_ptr<EventReader>> Events(std::optional<DeviceId> device) const override {
    absl::StatusOr<std::unique_ptr<EventReader>> r = inner_->Events(device);
    if (!r.ok()) return input_->Rename(r.status());
    return std::unique_ptr<EventReader>(std::make_unique<io::NamedReader>(input_, *std::move(r)));
  }

 private:
  std::shared_ptr<const io::InputFile> input_;
  std::unique_ptr<Recording> inner_;
  TraceMetadata metadata_;  // the inner one's, naming the input as the user did (`# source:`)
};

}  // namespace hbmsim

#endif  // HBMSIM_TRACE_FORMATS_NAMED_RECORDING_H_
