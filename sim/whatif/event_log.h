// A scenario's events held in memory, compactly, for the trials of `size`
// that replay them many times (sim/whatif/checkpoints.h).
//
// A record keeps what the engine reads of an event when the policy needs no
// shape and the event carries no attribute of its own: kind, id, bytes,
// stream, device (32 B). A recording with anything more (shapes, open
// attributes, a device id past 2^32) or more than kMaxEvents events has no
// log: its trials read the recording itself.
//
// The log is filled by the pass that surveys the scenario (SurveyScenario
// with SurveyOptions::keep_events), so `size` reads a text trace once for
// the survey and the log together instead of twice.
#ifndef HBMSIM_SIM_WHATIF_EVENT_LOG_H_
#define HBMSIM_SIM_WHATIF_EVENT_LOG_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/scenario.h"
#include "sim/whatif/huge_page_vector.h"
#include "trace/core/reader.h"

namespace hbmsim {

struct LoggedEvent {
  uint64_t id = 0;
  uint64_t bytes = 0;
  uint64_t stream = 0;
  uint32_t device = 0;
  EventKind kind = EventKind::kMark;
};

struct EventLog {
  static constexpr uint64_t kMaxEvents = uint64_t{1} << 23;  // 8 M events: 256 MiB of records

  HugePageVector<LoggedEvent> events;  // written once, read by every trial
  TraceMetadata metadata;

  // A log may be read while the survey still writes it (SharedTrials'
  // early leader): records [0, published) are written, and `growth` says
  // whether more will come. Its room is reserved up front, so records never
  // move. A log read only once complete has published == events.size().
  enum class Growth { kGrowing, kComplete, kDropped };
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

 private:
  // No log from here on (the trials read the recording); a reader behind it
  // is told so.
  void Drop();
  void Publish() { log_->published.store(log_->events.size(), std::memory_order_release); }

  EventReader& inner_;
  std::shared_ptr<EventLog> log_;  // nullptr once an event could not be logged
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
