// A Recording read from a spooled input (a pipe, a FIFO, `-`, /dev/stdin:
// trace/io/input_file.h): the format's own Recording, opened on
// /proc/self/fd/N, with the user's name for the input put back into its path,
// its facts' texts and every message. Its facts are the inner recording's, as
// one value (recorded_facts.h), so a command learns from a piped file all it
// learns from the file by path. It holds the scratch file open, so every
// Events() call (a `size` search reads the recording once per trial) reads it
// again from the start, although the pipe itself was read once.
#ifndef HBMSIM_TRACE_FORMATS_NAMED_RECORDING_H_
#define HBMSIM_TRACE_FORMATS_NAMED_RECORDING_H_

#include <memory>
#include <string>
#include <utility>

#include "trace/formats/recording.h"
#include "trace/io/input_file.h"
#include "trace/io/named_reader.h"

namespace hbmsim::trace {

class NamedRecording final : public Recording {
 public:
  NamedRecording(std::shared_ptr<const io::InputFile> input, std::unique_ptr<Recording> inner)
      : Recording(input->name(), inner->format(), Renamed(*input, inner->facts())),
        input_(std::move(input)),
        inner_(std::move(inner)) {}

  absl::StatusOr<std::unique_ptr<EventReader>> Events(std::optional<DeviceId> device) const override {
    absl::StatusOr<std::unique_ptr<EventReader>> r = inner_->Events(device);
    if (!r.ok()) return input_->Rename(r.status());
    return std::unique_ptr<EventReader>(std::make_unique<io::NamedReader>(input_, *std::move(r)));
  }

 private:
  // The texts that can name the file (a reader records its own path in
  // metadata, `# source:`; a description may quote it) name the input as
  // the user did.
  static RecordedFacts Renamed(const io::InputFile& input, RecordedFacts facts) {
    facts.metadata = io::RenamedMetadata(input, facts.metadata);
    facts.description = input.Rename(facts.description);
    return facts;
  }

  std::shared_ptr<const io::InputFile> input_;
  std::unique_ptr<Recording> inner_;
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_FORMATS_NAMED_RECORDING_H_
