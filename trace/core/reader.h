// The streaming interface every trace reader implements (text, binary,
// PyTorch snapshots, RMM logs, ...). A reader holds memory proportional to
// what is live in the trace, never to its length.
#ifndef HBMSIM_TRACE_CORE_READER_H_
#define HBMSIM_TRACE_CORE_READER_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "trace/core/context_table.h"
#include "trace/core/event.h"
#include "trace/core/recorded.h"

namespace hbmsim::trace {

// `# key: value` lines of the leading comment block, in file order.
struct TraceMetadata {
  bool has_version_header = false;  // `# hbmsim-trace v1` was present
  std::vector<std::pair<std::string, std::string>> entries;

  // The value of the first entry named `key`, or nullptr.
  const std::string* Find(std::string_view key) const {
    for (const auto& [k, v] : entries) {
      if (k == key) return &v;
    }
    return nullptr;
  }
};

class EventReader {
 public:
  virtual ~EventReader() = default;
  // Reads the next event into `e`: true, false at the end of the trace, or an
  // InvalidArgument error whose message starts with the location
  // ("trace.txt:12: free of id 7 that is not live").
  virtual absl::StatusOr<bool> Next(Event& e) = 0;
  virtual const TraceMetadata& metadata() const = 0;
  // Where the last event came from ("trace.txt:12"), for messages.
  virtual std::string Location() const = 0;
  // The recorded entry behind the last event when the format records more
  // than allocs and frees (a snapshot's segment_alloc, oom, ...): what a replay
  // compares itself with. nullopt for formats that record none.
  virtual std::optional<SideEntry> current_side() const { return std::nullopt; }
  // The last event's index in its device's recorded trace, for messages
  // ("device_traces[1][421]"); nullopt when the format has no such index.
  virtual std::optional<size_t> current_entry_index() const { return std::nullopt; }
  // What the recorded allocator reported right after the last event (a
  // profile's record); nullopt for formats and events that record none.
  virtual std::optional<RecordedFigures> current_figures() const { return std::nullopt; }
  // Stack frames and labels the recording kept (context_table.h): the
  // table, or nullptr for formats without them, and the last event's ids.
  virtual const ContextTable* context_table() const { return nullptr; }
  virtual EventContext context() const { return {}; }
};

// An EventReader that answers every question as the reader it wraps: a
// wrapper (a piped input's io::NamedReader) derives from it and overrides
// only what it changes, so a question added to EventReader is added here
// once and no wrapper can forget it.
class ForwardingReader : public EventReader {
 public:
  explicit ForwardingReader(std::unique_ptr<EventReader> inner) : inner_(std::move(inner)) {}

  absl::StatusOr<bool> Next(Event& e) override { return inner_->Next(e); }
  const TraceMetadata& metadata() const override { return inner_->metadata(); }
  std::string Location() const override { return inner_->Location(); }
  std::optional<SideEntry> current_side() const override { return inner_->current_side(); }
  std::optional<size_t> current_entry_index() const override { return inner_->current_entry_index(); }
  std::optional<RecordedFigures> current_figures() const override { return inner_->current_figures(); }
  const ContextTable* context_table() const override { return inner_->context_table(); }
  EventContext context() const override { return inner_->context(); }

 protected:
  const EventReader& inner() const { return *inner_; }
  EventReader& inner() { return *inner_; }

 private:
  std::unique_ptr<EventReader> inner_;
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_CORE_READER_H_
