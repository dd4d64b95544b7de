// A scenario's events held in memory, compactly, for the trials of `size`
// that replay them many times (sim/whatif/checkpoints.h).
//
// A record keeps what the engine reads of an event when the policy needs no
// shape and the event carries no attribute of its own: kind, id, bytes,
// stream, device (8 B, LoggedEvent; 8 more and a wide record of 24 for an
// event whose fields do not fit). A recording with anything more
// (shapes, open attributes, an event of 256 TiB or more, more than 4,096
// (device, stream) pairs) or more than kMaxEvents events has no log: its
// trials read the recording itself.
//
// The log is filled by the pass that surveys the scenario (SurveyScenario
// with SurveyOptions::keep_events), so `size` reads a text trace once for
// the survey and the log together instead of twice. That pass also numbers
// the live buffers (LoggingReader::NumberBufferIds), so a trial finds a
// buffer at the slot of its number instead of hashing the trace's id: ~6%
// of a `size` (bench/README.md, issue 20 round 14).
#ifndef HBMSIM_SIM_ENGINE_EVENT_LOG_H_
#define HBMSIM_SIM_ENGINE_EVENT_LOG_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "sim/engine/huge_page_vector.h"
#include "sim/layer.h"
#include "trace/core/reader.h"

namespace hbmsim::sim {

// An event as the log gives it back: what the engine reads of it.
struct WideEvent {
  uint64_t id = 0;
  uint64_t bytes = 0;
  uint32_t lane = 0;  // the event's device and stream, as an index into EventLog::lanes
  EventKind kind = EventKind::kMark;
  bool operator==(const WideEvent&) const = default;
};

// One event in 8 bytes where its fields fit, which once the survey has
// numbered the buffers is nearly every event of every recording:
//
//   63    60 59     52 51          32 31                  0
//   [ kind ] [ lane  ] [ id (number) ] [ bytes            ]
//
// else an escape (kind kEscape), whose low 60 bits index the event's whole
// record in EventLog::wide. Each halving of the record halved the fresh pages
// the survey faults in (on the virtual machines we measure, zeroing huge pages
// no process had touched cost up to 10 ms each and more than the survey's
// parse: bench/README.md, issue 20 round 16) and the bytes every probe reads.
struct LoggedEvent {
  // What a log holds at all (in wide records past the compact fields).
  static constexpr uint64_t kMaxBytes = (uint64_t{1} << 48) - 1;  // up to 256 TiB
  static constexpr uint32_t kMaxLanes = 4096;
  // The compact fields.
  static constexpr int kBytesBits = 32, kIdBits = 20, kLaneBits = 8, kKindBits = 4;
  static_assert(kBytesBits + kIdBits + kLaneBits + kKindBits == 64);
  static constexpr uint8_t kEscape = (1 << kKindBits) - 1;
  static_assert(static_cast<int>(EventKind::kMark) < kEscape);

  uint64_t packed = 0;

  // The compact record of `e`, or nullopt when a field does not fit.
  static std::optional<LoggedEvent> Compact(const WideEvent& e) {
    if (e.bytes >> kBytesBits || e.id >> kIdBits || e.lane >> kLaneBits) return std::nullopt;
    return LoggedEvent(e.bytes | e.id << kBytesBits | uint64_t{e.lane} << (kBytesBits + kIdBits) |
                       uint64_t{static_cast<uint8_t>(e.kind)} << (64 - kKindBits));
  }
  static LoggedEvent Escape(uint64_t wide_index) {
    return LoggedEvent(wide_index | uint64_t{kEscape} << (64 - kKindBits));
  }
  // This compact record with the id `id`, or nullopt when it does not fit.
  std::optional<LoggedEvent> WithId(uint64_t id) const {
    if (id >> kIdBits) return std::nullopt;
    constexpr uint64_t kIdMask = ((uint64_t{1} << kIdBits) - 1) << kBytesBits;
    return LoggedEvent((packed & ~kIdMask) | id << kBytesBits);
  }
  bool escaped() const { return packed >> (64 - kKindBits) == kEscape; }
  uint64_t wide_index() const { return packed & ((uint64_t{1} << (64 - kKindBits)) - 1); }
  // The fields of a compact record (!escaped()).
  EventKind kind() const { return static_cast<EventKind>(packed >> (64 - kKindBits)); }
  uint64_t id() const { return (packed >> kBytesBits) & ((uint64_t{1} << kIdBits) - 1); }
  uint64_t bytes() const { return packed & ((uint64_t{1} << kBytesBits) - 1); }
  uint32_t lane() const { return static_cast<uint32_t>((packed >> (kBytesBits + kIdBits)) & ((1 << kLaneBits) - 1)); }

 private:
  explicit LoggedEvent(uint64_t p) : packed(p) {}
};
static_assert(sizeof(LoggedEvent) == 8);

// A device and a stream, as events name them.
struct EventLane {
  uint64_t stream = 0;
  uint64_t device = 0;
};

struct EventLog {
  static constexpr uint64_t kMaxEvents = uint64_t{1} << 23;  // 8 M events: 64 MiB of compact records

  HugePageVector<LoggedEvent> events;  // written once, read by every trial
  // The events no compact record holds, in order (LoggedEvent::Escape). Room
  // for as many as `events` is made with it, so they never move either.
  HugePageVector<WideEvent> wide;
  // The lanes the records name, room for all of them made up front: a
  // reader behind a growing log reads lanes written before the records it
  // was published, and nothing ever moves.
  std::unique_ptr<EventLane[]> lanes = std::make_unique<EventLane[]>(LoggedEvent::kMaxLanes);
  TraceMetadata metadata;

  // A log may be read while the survey still writes it (SharedTrials'
  // early leader): records [0, published) are written, and `growth` says
  // whether more will come. Its room is reserved up front, so records never
  // move. A log read only once complete has published == events.size().
  enum class Growth { kGrowing, kComplete, kDropped };
  // Whether the buffer events' ids are numbers the survey gave the live
  // buffers (LoggingReader::NumberBufferIds), not the trace's: set before
  // any reader starts (a trial's engine then indexes by them).
  bool ids_numbered = false;
  std::atomic<uint64_t> published{0};
  std::atomic<Growth> growth{Growth::kComplete};
  const LoggedEvent* records = nullptr;  // events.data(), kept while it grows
  const WideEvent* wide_records = nullptr;  // wide.data(), likewise

  // The records, as a reader reads them: through the pointers kept while the
  // log grows (the vectors themselves are the writer's), else the vectors'.
  const LoggedEvent* record_data() const { return records != nullptr ? records : events.data(); }
  const WideEvent* wide_data() const { return wide_records != nullptr ? wide_records : wide.data(); }

  // Event i (< events.size(), or < published while the log grows).
  WideEvent At(uint64_t i) const {
    const LoggedEvent l = record_data()[i];
    if (l.escaped()) return wide_data()[l.wide_index()];
    return WideEvent{l.id(), l.bytes(), l.lane(), l.kind()};
  }
};

// Reads through `inner`, logging each event it passes on; `log()` is the
// whole log once `inner` has ended, nullptr when an event could not be
// logged (see above) or the reader was not read to its end.
class LoggingReader : public EventReader {
 public:
  // `expected_events`: how many to make room for (0: unknown).
  LoggingReader(EventReader& inner, uint64_t expected_events);
  // Fills `log` (from NewGrowingLog), publishing records as they come.
  LoggingReader(EventReader& inner, std::shared_ptr<EventLog> log);
  ~LoggingReader() override;

  absl::StatusOr<bool> Next(Event& e) override;
  const TraceMetadata& metadata() const override { return inner_.metadata(); }
  std::string Location() const override { return inner_.Location(); }
  std::optional<SideEntry> current_side() const override { return inner_.current_side(); }
  std::optional<size_t> current_entry_index() const override { return inner_.current_entry_index(); }
  std::optional<RecordedFigures> current_figures() const override { return inner_.current_figures(); }
  const ContextTable* context_table() const override { return inner_.context_table(); }
  EventContext context() const override { return inner_.context(); }

  std::shared_ptr<const EventLog> log() const { return ended_ ? log_ : nullptr; }

  // Buffer numbering, the survey's (sim/whatif/trial.cc): its engine hands
  // each live buffer a number (0, 1, ...; a freed number is the next one
  // given, so the numbers stay below the most buffers ever live), and each alloc, free, free_requested and
  // free_completed of the selected device is logged with its buffer's number
  // instead of the trace's id. Trials then find a buffer by its number
  // (ReplayOptions::numbered_ids) instead of hashing an id the trace chose.
  // The numbers keep what the ids meant to the engine: two events of the
  // device name one buffer iff they did before, and every event the engine
  // refused it still refuses (the survey replays them all first: a
  // recording it refuses has no log). Call before the first event.
  void NumberBufferIds();
  // The event just read is of the buffer numbered `number`: logs that as
  // its id (only for buffer events; a program keeps its id, in a table of its own).
  void NumberLast(uint64_t number);

 private:
  // No log from here on (the trials read the recording); a reader behind it
  // is told so.
  void Drop();
  // Every record but the last: the engine reading through this reader may
  // still number it (NumberLast). Once the reader has ended, all of them.
  void Publish() {
    const uint64_t n = log_->events.size();
    log_->published.store(ended_ || n == 0 ? n : n - 1, std::memory_order_release);
  }
  // Appends `e` as the last record (a wide one where it must); false when
  // there is no memory for it.
  bool Put(const WideEvent& e);
  [[gnu::noinline]] bool PutSlowly(const WideEvent& e, const std::optional<LoggedEvent>& compact);
  // NumberLast for a last record that is or becomes a wide one.
  [[gnu::noinline]] void RenumberWide(uint64_t number);
  // The lane of (device, stream), added if new; nullopt when the log has
  // no room for another.
  std::optional<uint32_t> LaneOf(DeviceId device, StreamId stream);

  EventReader& inner_;
  std::shared_ptr<EventLog> log_;  // nullptr once an event could not be logged
  uint32_t lanes_ = 0;             // lanes in use
  uint32_t last_lane_ = 0;         // the previous event's: nearly every event's
  absl::flat_hash_map<std::pair<uint64_t, uint64_t>, uint32_t> lane_index_;  // (device, stream) -> lane
  bool ended_ = false;
};

// An empty log with room for kMaxEvents, to be read while a LoggingReader
// fills it; nullptr where the system refuses the address space.
std::shared_ptr<EventLog> NewGrowingLog();

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_ENGINE_EVENT_LOG_H_
