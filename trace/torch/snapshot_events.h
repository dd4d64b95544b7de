// A PyTorch memory snapshot's device traces as a stream of hbmsim events
// (trace/core/event.h), so a snapshot replays and converts like any trace.
//
// Per device, in the order the devices are given:
//
//   preexisting   one `alloc tag=preexisting addr=<a>` per block live at the
//                 trace start (RebuildInitialState, address order); a block
//                 already pending free also gets its `free_requested`
//   trace entry   alloc          → alloc <new id> <size> addr=<a>
//                 free_requested → free_requested <id of the live block at a>
//                 free_completed → free_completed <id>, or `free <id>` when no
//                                  free_requested came first (tolerated)
//                 free (gen1)    → free <id>
//                 oom            → alloc <new id> <size> tag=oom, then free <id>:
//                                  the request the allocator refused; freed at
//                                  once if a replay happens to fit it
//                 anything else  → mark <action>:addr=<a>,size=<n>  (segment_*,
//                                  snapshot, annotations: side information)
//   A free of an address with no live block (a history that starts mid-run
//   and a rebuild that could not see the block) becomes a `mark unmatched_...`.
//   t= is the entry's time_us, raised to the latest t= handed out so far when
//   it is earlier (a later device's clock, or entries recorded out of order).
//
// Buffer ids count up from 1 across all devices: a device's preexisting blocks
// first, then one id per alloc and per oom entry of its trace. The reader keeps
// the address → id map of live blocks only; the snapshot itself is shared.
#ifndef HBMSIM_TRACE_TORCH_SNAPSHOT_EVENTS_H_
#define HBMSIM_TRACE_TORCH_SNAPSHOT_EVENTS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "trace/core/reader.h"
#include "trace/core/recorded.h"

namespace hbmsim::trace {

// This header is included next to allocator/ headers by the sim layer, and
// snapshot.h's BlockState collides with allocator/core/memory_map.h's: so it
// names snapshot types only by forward declaration, and what the replay
// needs crosses in the plain structs below.
struct Snapshot;
struct InitialState;
class InitialStateCache;

// Devices whose trace has at least one entry, ascending.
std::vector<DeviceId> DevicesWithTraces(const Snapshot& snap);

// `wanted`, or the first device with a trace. Error (InvalidArgument) when
// that device has no trace: "f.pickle: no trace for device 0 (devices with
// traces: none)".
absl::StatusOr<DeviceId> ChooseSnapshotDevice(const Snapshot& snap, std::optional<DeviceId> wanted);

class SnapshotEventReader : public EventReader {
 public:
  // `starts`: the start states of `snap` shared with its other readers
  // (InitialStateCache); null for a reader of its own.
  SnapshotEventReader(std::shared_ptr<const Snapshot> snap, std::vector<DeviceId> devices,
                      std::shared_ptr<InitialStateCache> starts = nullptr);
  ~SnapshotEventReader() override;
  // Loads `path` and reads every device with a trace (convert, and replay
  // under policies that are not `torch`).
  static absl::StatusOr<std::unique_ptr<SnapshotEventReader>> Open(const std::string& path);
  // Loads `path` and reads one device: `device`, or the first with a trace.
  static absl::StatusOr<std::unique_ptr<SnapshotEventReader>> OpenDevice(const std::string& path,
                                                                         std::optional<DeviceId> device);

  absl::StatusOr<bool> Next(Event& e) override;
  const TraceMetadata& metadata() const override { return metadata_; }
  // "f.pickle: device_traces[1][421]" or "f.pickle: device 1 preexisting block 3".
  std::string Location() const override;
  // The recorded entry's frames and labels; a preexisting block's are those
  // of its block in the final segments or of the entry that frees it.
  const ContextTable* context_table() const override;
  EventContext context() const override { return context_; }

  const std::string& file_name() const;
  int generation() const;
  std::optional<RecordedSettings> settings() const;
  DeviceId device(size_t i) const;
  // The start of `devices[i]`'s trace, with the ids of its live blocks.
  std::vector<StartSegment> StartSegments(size_t i) const;
  StartSummary Start(size_t i) const;
  std::optional<OomCapacity> CapacityAtFirstOom(size_t i) const;
  HistoryAddresses FinalHistory(size_t i) const;
  // How many events `devices[i]`'s stream yields (its preexisting blocks
  // with their free_requested, one per trace entry, two per oom).
  uint64_t EventCount(size_t i) const;
  // The trace entry behind the last event (nullopt for preexisting blocks,
  // allocs and frees).
  std::optional<SideEntry> current_side() const override;
  // Its index in device_traces[device]; nullopt for a preexisting block.
  std::optional<size_t> current_entry_index() const override { return entry_; }

 private:
  struct DeviceState;
  struct LiveBlock {
    uint64_t id = 0;
    bool free_requested = false;
  };
  enum class Phase : uint8_t { kPreexisting, kPendingOfPreexisting, kTrace };

  void BuildDevices(const std::vector<DeviceId>& devices);
  void StartDevice();
  bool NextPreexisting(Event& e);
  void FromEntry(size_t index, Event& e);
  void FreeEvent(size_t index, Event& e);
  void MarkEvent(size_t index, std::string_view prefix, Event& e);

  std::shared_ptr<const Snapshot> snap_;
  std::shared_ptr<InitialStateCache> starts_;
  std::vector<std::unique_ptr<DeviceState>> devices_;
  TraceMetadata metadata_;
  size_t device_ = 0;  // index into devices_
  Phase phase_ = Phase::kPreexisting;
  size_t cursor_ = 0;                     // preexisting block or trace entry of the current device
  std::optional<size_t> entry_;           // the entry behind the last event
  std::optional<uint64_t> oom_id_;        // an oom's `free` is still to come
  std::optional<uint64_t> last_time_us_;  // the latest t= handed out
  EventContext context_;                  // of the last event
  uint64_t next_id_ = 1;
  absl::flat_hash_map<uint64_t, LiveBlock> live_;  // address → live block (lookup only)
  std::string label_;                              // storage of the last mark's label
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TORCH_SNAPSHOT_EVENTS_H_
