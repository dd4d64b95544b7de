// What a recording knows besides its events, as one value (issue 45): filled
// once when the file is opened, copied whole by a wrapper (a piped input's
// NamedRecording, a `scale` prediction), so a wrapper cannot forget a fact
// and a new fact is a field here, not a virtual on Recording.
//
//   RecordedFacts
//     ├─ metadata, description   `# key: value` entries; one line for reports
//     ├─ devices                 each device with its event count, when the
//     │                          file says so up front (snapshots, dumps)
//     ├─ records_side_entries    streams report segment calls and OOMs
//     ├─ records_figures         streams report the allocator's own figures
//     ├─ state_only              a state and no event (nothing to replay)
//     ├─ held_state              what each device held, without addresses
//     ├─ context_table           the stacks and labels frames refer to
//     ├─ final_state             the allocator state the file was written in
//     └─ device(d) ─▶ DeviceFacts: settings, limit, start state and its
//                     summary, recorded OOM, final history
//
// What costs a walk of the recording (a device's start state is rebuilt from
// its trace; the final history walks it again) is a Lazy: made on first use,
// once, and shared by every copy of the facts.
#ifndef HBMSIM_TRACE_FORMATS_RECORDED_FACTS_H_
#define HBMSIM_TRACE_FORMATS_RECORDED_FACTS_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trace/core/context_table.h"
#include "trace/core/held_state.h"
#include "trace/core/reader.h"
#include "trace/core/recorded.h"
#include "trace/core/recorded_state.h"

namespace hbmsim::trace {

// A value made on first use by `make`, once, whichever thread asks first
// (a `size` search reads facts from its trial threads); copies share it.
template <typename T>
class Lazy {
 public:
  Lazy() : Lazy(T{}) {}
  // Already made: a fact that costs nothing.
  Lazy(T value) : cell_(std::make_shared<Cell>()) { cell_->value = std::move(value); }  // NOLINT: implicit
  static Lazy Of(std::function<T()> make) {
    auto cell = std::make_shared<Cell>();
    cell->make = std::move(make);
    return Lazy(std::move(cell));
  }
  // A value made from this one's, when first asked for (a prediction's
  // device facts from its template's).
  Lazy Then(std::function<T(const T&)> change) const {
    return Of([source = *this, change = std::move(change)] { return change(source.get()); });
  }

  const T& get() const {
    std::call_once(cell_->once, [cell = cell_.get()] {
      if (!cell->value) cell->value = cell->make();
      cell->make = nullptr;  // what it captured (a whole snapshot) is no longer needed
    });
    return *cell_->value;
  }

 private:
  struct Cell {
    std::once_flag once;
    std::function<T()> make;
    std::optional<T> value;
  };
  explicit Lazy(std::shared_ptr<Cell> cell) : cell_(std::move(cell)) {}

  std::shared_ptr<Cell> cell_;
};

// What a recording says about one device.
struct DeviceFacts {
  // The allocator options the job ran with (a profile's allocators differ).
  std::optional<RecordedSettings> settings;
  // The memory limit the recording states.
  std::optional<RecordedLimit> limit;
  // The segments and live blocks held when the device's events start (a
  // snapshot taken mid-run); empty: nothing. Their ids are those of the
  // device's own stream (Recording::Events(device)).
  std::vector<StartSegment> start_state;
  std::optional<StartSummary> start_summary;
  // The capacity the device's first recorded OOM implies.
  std::optional<OomCapacity> recorded_oom;
  // Recorded addresses of the blocks live at the end (gen1 snapshots'
  // history), for --check-recorded.
  Lazy<HistoryAddresses> final_history;
};

struct RecordedFacts {
  TraceMetadata metadata;
  // One line saying what the file is ("PyTorch snapshot (generation 4)");
  // empty: the format's name (Recording fills it in).
  std::string description;
  // Every device with events and their counts, ascending, when the file
  // lists them without reading every event (possibly none); nullopt
  // otherwise (a replay then takes the device of the first event).
  std::optional<std::vector<DeviceEvents>> devices;
  // Streams report the recorded entries behind events
  // (EventReader::current_side): segment calls and OOMs to compare with.
  bool records_side_entries = false;
  // Streams report what the recorded allocator said after each event
  // (EventReader::current_figures): a TF/JAX profile's BFC figures.
  bool records_figures = false;
  // The file holds a state and no event on any device: nothing to replay
  // (a snapshot dumped without _record_memory_history).
  bool state_only = false;
  // What each device held when the file was written, when the format says so
  // without addresses (a JAX device memory profile); null otherwise. The
  // recording's events are then that state as allocations (tag=preexisting).
  std::shared_ptr<const HeldState> held_state;
  // The stacks and labels final_state's frames refer to; null when none.
  std::shared_ptr<const ContextTable> context_table;
  // The allocator state the file was written in (a snapshot's own segments);
  // nullopt when the format records none.
  std::optional<Lazy<RecordedStates>> final_state;
  // Per device: the devices the format knows up front; any other device gets
  // `other_devices` (for a stream, every device: the recording's settings).
  std::map<DeviceId, Lazy<DeviceFacts>> by_device;
  Lazy<DeviceFacts> other_devices;

  const DeviceFacts& device(DeviceId d) const {
    const auto it = by_device.find(d);
    return (it == by_device.end() ? other_devices : it->second).get();
  }
  // The state of `device`, else of the first device holding a segment;
  // nullopt when the format records none.
  std::optional<RecordedState> FinalState(std::optional<DeviceId> d) const {
    if (!final_state) return std::nullopt;
    return final_state->get().For(d);
  }
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_FORMATS_RECORDED_FACTS_H_
