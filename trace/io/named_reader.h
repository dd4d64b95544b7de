// An EventReader over a spooled input (input_file.h): keeps the scratch file
// open for as long as the reader runs and says the user's name for the input
// (`-` is "<stdin>") in every message, Location() and metadata value, never
// /proc/self/fd/N. Every other answer is the inner reader's (ForwardingReader).
#ifndef HBMSIM_TRACE_IO_NAMED_READER_H_
#define HBMSIM_TRACE_IO_NAMED_READER_H_

#include <memory>
#include <string>
#include <utility>

#include "trace/core/reader.h"
#include "trace/io/input_file.h"

namespace hbmsim::trace::io {

// `metadata` with the scratch path replaced by the user's name in every
// value: a reader records its own path (XLA's `xla_live_ranges`, a profile's
// `source`), and outputs copy these entries.
inline TraceMetadata RenamedMetadata(const InputFile& input, const TraceMetadata& metadata) {
  TraceMetadata out = metadata;
  for (auto& [key, value] : out.entries) value = input.Rename(value);
  return out;
}

class NamedReader final : public ForwardingReader {
 public:
  NamedReader(std::shared_ptr<const InputFile> input, std::unique_ptr<EventReader> inner)
      : ForwardingReader(std::move(inner)), input_(std::move(input)) {}

  absl::StatusOr<bool> Next(Event& e) override {
    absl::StatusOr<bool> got = ForwardingReader::Next(e);
    if (!got.ok()) return input_->Rename(got.status());
    return got;
  }
  // Renamed again whenever the inner reader has added entries (a text
  // trace's header is read with its first events).
  const TraceMetadata& metadata() const override {
    const TraceMetadata& inner_metadata = inner().metadata();
    if (inner_metadata.entries.size() != metadata_.entries.size() ||
        inner_metadata.has_version_header != metadata_.has_version_header) {
      metadata_ = RenamedMetadata(*input_, inner_metadata);
    }
    return metadata_;
  }
  std::string Location() const override { return input_->Rename(inner().Location()); }

 private:
  std::shared_ptr<const InputFile> input_;
  mutable TraceMetadata metadata_;
};

}  // namespace hbmsim::trace::io

#endif  // HBMSIM_TRACE_IO_NAMED_READER_H_
