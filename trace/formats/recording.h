// A recording: one trace file opened once, with everything it knows.
//
//   Recording ──Events(device)──▶ EventReader   (a fresh stream per call)
//       │
//       ├─ metadata          `# device_bytes: N`, `# warning: ...`
//       ├─ devices()         each device with its event count, when the file
//       │                    says so up front (snapshots, XLA dumps)
//       ├─ StartState(d)     the segments and live blocks held when d's events
//       │                    start (a snapshot taken mid-run); empty: nothing
//       ├─ RecordedOom(d)    the capacity d's first recorded OOM implies
//       ├─ FinalHistory(d)   recorded addresses of the blocks live at the end
//       ├─ Limit(d)          the memory limit the recording states for d
//       ├─ DeviceSettings(d) the allocator options the job ran with
//       └─ held_state()      what each device held, without addresses (a JAX
//                            device memory profile: trace/core/held_state.h)
//
// Events() can be called again and again, from several threads at once: a
// `size` search replays the recording once per trial, reading it afresh each
// time instead of holding its events in memory. A format held in memory (a
// snapshot, an XLA dump) serves each stream from that copy; a streamed format
// (text, .hbt, logs) reopens its file, so its memory stays what one reader
// needs. A file that cannot be read twice (a pipe) fails on the second call.
#ifndef HBMSIM_TRACE_FORMATS_RECORDING_H_
#define HBMSIM_TRACE_FORMATS_RECORDING_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "trace/core/context_table.h"
#include "trace/core/held_state.h"
#include "trace/core/reader.h"
#include "trace/core/recorded.h"
#include "trace/core/recorded_state.h"

namespace hbmsim {

class Recording {
 public:
  Recording(std::string path, std::string_view format) : path_(std::move(path)), format_(format) {}
  virtual ~Recording() = default;
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  const std::string& path() const { return path_; }
  // The format's row name in the table ("text", "torch-snapshot", ...).
  std::string_view format() const { return format_; }

  virtual const TraceMetadata& metadata() const = 0;
  // Every device with events and their counts, ascending, when the file
  // lists them without reading every event (possibly none); nullopt otherwise
  // (a replay then takes the device of the first event and counts the others
  // as it goes).
  virtual std::optional<std::vector<DeviceEvents>> devices() const { return std::nullopt; }
  // Whether streams report the recorded entries behind events
  // (EventReader::current_side): segment calls and OOMs to compare with.
  virtual bool records_side_entries() const { return false; }
  // Whether streams report what the recorded allocator said after each event
  // (EventReader::current_figures): a TF/JAX profile's BFC figures.
  virtual bool records_figures() const { return false; }
  virtual std::vector<StartSegment> StartState(DeviceId device) const { return {}; }
  virtual std::optional<StartSummary> StartStateSummary(DeviceId device) const { return std::nullopt; }
  virtual std::optional<OomCapacity> RecordedOom(DeviceId device) const { return std::nullopt; }
  virtual std::optional<RecordedSettings> settings() const { return std::nullopt; }
  // The settings of one device's allocator (a profile's allocators differ):
  // the recording's by default.
  virtual std::optional<RecordedSettings> DeviceSettings(DeviceId) const { return settings(); }
  virtual std::optional<RecordedLimit> Limit(DeviceId device) const { return std::nullopt; }
  // Recorded addresses of the blocks live at the end (gen1 snapshots' history).
  virtual HistoryAddresses FinalHistory(DeviceId device) const { return {}; }
  // The allocator state the file was written in (a snapshot's own segments)
  // for `device`, else the first device holding a segment; nullopt when the
  // format records none (recorded_state.h).
  virtual std::optional<RecordedState> FinalState(std::optional<DeviceId> device) const {
    return std::nullopt;
  }
  // True when the file holds that state and no event on any device: nothing
  // to replay (a snapshot dumped without _record_memory_history).
  virtual bool state_only() const { return false; }
  // What each device held when the file was written, when the format says
  // so without addresses (a JAX device memory profile); null otherwise. Its
  // Events() are then that state as allocations (tag=preexisting).
  virtual const HeldState* held_state() const { return nullptr; }
  // The stacks and labels FinalState's frames refer to; null when none.
  virtual const ContextTable* context_table() const { return nullptr; }
  // One line saying what the file is, for reports ("PyTorch snapshot, generation 4").
  virtual std::string Describe() const { return std::string(format_); }

  // A new stream from the first event: only `device`'s events when the
  // format can select them without reading the others, else every device's
  // (the replay engine skips the others). nullopt: every device. The ids of a
  // device's start state are those of its events here.
  virtual absl::StatusOr<std::unique_ptr<EventReader>> Events(std::optional<DeviceId> device) const = 0;

 private:
  std::string path_;
  std::string_view format_;
};

}  // namespace hbmsim

#endif  // HBMSIM_TRACE_FORMATS_RECORDING_H_
