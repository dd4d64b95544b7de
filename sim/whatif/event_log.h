// A scenario's events held in memory, compactly, for the trials of `size`
// that replay them many times (sim/whatif/checkpoints.h).
//
// A record keeps what the engine reads of an event when the policy needs no
// shape and the event carries no attribute of its own: kind, id, bytes,
// stream, device (16 B, LoggedEvent). A recording with anything more
// (shapes, open attributes, an event of 256 TiB or more, more than 4,096
// (device, stream) pairs) or more than kMaxEvents events has no log: its
// trials read the recording itself.
//
// The log is filled by the pass that surveys the scenario (SurveyScenario
// with SurveyOptions::keep_events), so `size` reads a text trace once for
// the survey and the log together instead of twice. That pass also numbers
// the live buffers (LoggingReader::NumberBufferIds), so a trial finds a
// buffer at the slot of its number instead of hashing the trace's id: ~6%
// of a bfc `size` (bench/README.md, issue 20 round 14).
#ifndef HBMSIM_SIM_WHATIF_EVENT_LOG_H_
#define HBMSIM_SIM_WHATIF_EVENT_LOG_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "sim/scenario/scenario.h"
#include "sim/whatif/huge_page_vector.h"
#include "trace/core/reader.h"

namespace hbmsim {

// One event in 16 bytes: its id, and its bytes with the kind and its lane
// (the event's device and stream, as an index into EventLog::lanes) above
// them. Halving the record halved the fresh pages the survey faults in
// (on the virtual machines we measure, zeroing them was a third of the
// survey) and the bytes every probe reads.
struct LoggedEvent {
  static constexpr int kBytesBits = 48;  // up to 256 TiB
  static constexpr int kKindBits = 4;
  static constexpr int kLaneBits = 64 - kBytesBits - kKindBits;
  static constexpr uint64_t kMaxBytes = (uint64_t{1} << kBytesBits) - 1;
  static constexpr uint32_t kMaxLanes = uint32_t{1} << kLaneBits;  // 4096
  static_assert(static_cast<int>(EventKind::kMark) < (1 << kKindBits));

  uint64_t id = 0;
  uint64_t packed = 0;  // bytes | kind << 48 | lane << 52

  LoggedEvent() = default;
  // bytes <= kMaxBytes, lane < kMaxLanes.
  LoggedEvent(uint64_t id, uint64_t bytes, EventKind kind, uint32_t lane)
      : id(id),
        packed(bytes | uint64_t{static_cast<uint8_t>(kind)} << kBytesBits |
               uint64_t{lane} << (kBytesBits + kKindBits)) {}
  uint64_t bytes() const { return packed & kMaxBytes; }
  EventKind kind() const { return static_cast<EventKind>((packed >> kBytesBits) & ((1 << kKindBits) - 1)); }
  uint32_t lane() const { return static_cast<uint32_t>(packed >> (kBytesBits + kKindBits)); }
};
static_assert(sizeof(LoggedEvent) == 16);

// A device and a stream, as events name them.
struct EventLane {
  uint64_t stream = 0;
  uint64_t device = 0;
};

struct EventLog {
  static constexpr uint64_t kMaxEvents = uint64_t{1} << 23;  // 8 M events: 128 MiB of records

  HugePageVector<LoggedEvent> events;  // written once, read by every trial
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

// The scenario's events read into a log of their own; nullptr when they
// cannot be logged or do not read (the trials report the error).
std::shared_ptr<const EventLog> ReadEventLog(const Scenario& scenario, uint64_t expected_events);

}  // namespace hbmsim

#endif  // HBMSIM_SIM_WHATIF_EVENT_LOG_H_
