#include "sim/engine/event_log.h"

#include <algorithm>
#include <new>
#include <utility>

namespace hbmsim::sim {

LoggingReader::LoggingReader(EventReader& inner, uint64_t expected_events)
    : inner_(inner), log_(std::make_shared<EventLog>()) {
  // Unknown: room for the most a log holds. It is address space only; a
  // page is touched when an event is written to it (huge_page_vector.h), and
  // the log never moves while it grows.
  // Where the system refuses the address space, there is no log (the trials
  // read the recording), never a failed command.
  try {
    const uint64_t room = expected_events == 0 ? EventLog::kMaxEvents : std::min(expected_events, EventLog::kMaxEvents);
    log_->events.reserve(room);
    log_->wide.reserve(room);
  } catch (const std::bad_alloc&) {
    log_.reset();
  }
}

LoggingReader::LoggingReader(EventReader& inner, std::shared_ptr<EventLog> log)
    : inner_(inner), log_(std::move(log)) {}

LoggingReader::~LoggingReader() {
  if (log_ && !ended_) Drop();  // not read to its end: no log
}

void LoggingReader::Drop() {
  log_->growth.store(EventLog::Growth::kDropped, std::memory_order_release);
  log_.reset();
}

void LoggingReader::NumberBufferIds() {
  if (log_) log_->ids_numbered = true;
}

// Nearly every event: a compact record within the room reserved, which
// neither throws nor moves the log.
[[gnu::always_inline]] inline bool LoggingReader::Put(const WideEvent& e) {
  const std::optional<LoggedEvent> compact = LoggedEvent::Compact(e);
  HugePageVector<LoggedEvent>& events = log_->events;
  if (compact && events.size() < events.capacity()) [[likely]] {
    events.push_back(*compact);
    return true;
  }
  return PutSlowly(e, compact);
}

bool LoggingReader::PutSlowly(const WideEvent& e, const std::optional<LoggedEvent>& compact) {
  try {
    if (compact) {
      log_->events.push_back(*compact);
    } else {
      log_->wide.push_back(e);
      log_->events.push_back(LoggedEvent::Escape(log_->wide.size() - 1));
    }
  } catch (const std::bad_alloc&) {
    return false;  // more events than reserved for, and no memory to grow
  }
  return true;
}

void LoggingReader::NumberLast(uint64_t number) {
  if (!log_ || !log_->ids_numbered || log_->events.empty()) return;
  LoggedEvent& record = log_->events.back();
  if (record.escaped()) [[unlikely]] {
    RenumberWide(number);
  } else if (IsBufferEvent(record.kind())) {
    const std::optional<LoggedEvent> numbered = record.WithId(number);
    if (numbered) [[likely]] {
      record = *numbered;
    } else {
      RenumberWide(number);
    }
  }
}

void LoggingReader::RenumberWide(uint64_t number) {
  WideEvent last = log_->At(log_->events.size() - 1);
  if (!IsBufferEvent(last.kind)) return;
  last.id = number;
  // Written again, compact where the number fits though the trace's id did
  // not: a wide record is only ever the last one's, so it goes first.
  if (log_->events.back().escaped()) log_->wide.pop_back();
  log_->events.pop_back();
  if (!PutSlowly(last, LoggedEvent::Compact(last))) Drop();
}

std::shared_ptr<EventLog> NewGrowingLog() {
  auto log = std::make_shared<EventLog>();
  try {
    log->events.reserve(EventLog::kMaxEvents);
    log->wide.reserve(EventLog::kMaxEvents);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  log->records = log->events.data();
  log->wide_records = log->wide.data();
  log->growth.store(EventLog::Growth::kGrowing, std::memory_order_relaxed);
  return log;
}

absl::StatusOr<bool> LoggingReader::Next(Event& e) {
  absl::StatusOr<bool> more = inner_.Next(e);
  if (!more.ok() || !log_) return more;
  if (!*more) {
    ended_ = true;
    log_->metadata = inner_.metadata();
    Publish();
    log_->growth.store(EventLog::Growth::kComplete, std::memory_order_release);
    return more;
  }
  const std::optional<uint32_t> lane = LaneOf(e.device, e.stream);
  if (e.shape || !e.attrs.empty() || !lane || e.bytes.value() > LoggedEvent::kMaxBytes ||
      log_->events.size() >= EventLog::kMaxEvents) {
    Drop();  // the trials read the recording instead; give the memory back now
    return more;
  }
  if (!Put(WideEvent{e.id, e.bytes.value(), *lane, e.kind})) {
    Drop();  // more events than reserved for, and no memory to grow: no log
    return more;
  }
  // Often enough for a reader close behind, seldom enough to cost nothing.
  if (log_->events.size() % 1024 == 0) Publish();
  return more;
}

std::optional<uint32_t> LoggingReader::LaneOf(DeviceId device, StreamId stream) {
  const auto is = [&](uint32_t l) {
    return log_->lanes[l].device == device.value() && log_->lanes[l].stream == stream.value();
  };
  if (lanes_ > 0 && is(last_lane_)) return last_lane_;
  const auto [at, added] = lane_index_.try_emplace(std::make_pair(device.value(), stream.value()), lanes_);
  if (added) {
    if (lanes_ == LoggedEvent::kMaxLanes) return std::nullopt;
    log_->lanes[lanes_++] = EventLane{stream.value(), device.value()};
  }
  return last_lane_ = at->second;
}

}  // namespace hbmsim::sim
