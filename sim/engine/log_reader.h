// The events of an EventLog (sim/engine/event_log.h) read back as an
// EventReader, for the shared trials of `size` (sim/whatif/checkpoints.h):
// from any event, stopping at every multiple of a stride for the trial to
// take a checkpoint or a mark, and following a log that is still growing
// (the early leader reads close behind the survey that writes it).
#ifndef HBMSIM_SIM_ENGINE_LOG_READER_H_
#define HBMSIM_SIM_ENGINE_LOG_READER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sim/engine/replay_engine.h"
#include "sim/engine/event_log.h"
#include "sim/layer.h"
#include "trace/core/reader.h"

namespace hbmsim::sim {

// The captured events, from `next`; `before(i)` runs before event i is read
// for every i that is a multiple of `stride`, when every earlier event has
// been applied, and ends the reading early by returning false. A log still
// growing is read as far as it is published, waiting for more until it is
// complete (or dropped: an error).
class LogReader : public EventReader {
 public:
  LogReader(const EventLog& log, uint64_t next, uint64_t stride, const std::atomic<bool>* cancel,
            std::function<bool(uint64_t)> before)
      : log_(log), records_(log.record_data()), wide_(log.wide_data()), lanes_(log.lanes.get()),
        end_(log.published.load(std::memory_order_acquire)), next_(next),
        next_mark_((next + stride - 1) / stride * stride), stride_(stride), cancel_(cancel),
        before_(std::move(before)) {}

  absl::StatusOr<bool> Next(Event& e) override {
    PlainEvent p;
    absl::Status stop;
    if (!NextPlain(p, stop)) {
      if (!stop.ok()) return stop;
      return false;
    }
    // A logged event has no attributes: clear them only if the caller's
    // Event holds some (the engine passes the same one every time, and a
    // whole-struct reset was a tenth of a probe's time).
    if (e.time_us || e.addr || e.shape || !e.tag.empty() || !e.label.empty() || !e.attrs.empty()) e = Event{};
    CopyPlain(p, e);
    return true;
  }
  // ReplayEngine::RunPlain's reader: Next without the Event.
  [[gnu::always_inline]] bool NextPlain(PlainEvent& p, absl::Status& stop) {
    if (next_ >= end_ || next_ == next_mark_) [[unlikely]] {
      if (!AtBoundary(stop)) return false;
    }
    const LoggedEvent l = records_[next_++];
    if (l.escaped()) [[unlikely]] {
      Wide(wide_[l.wide_index()], p);
      return true;
    }
    const EventLane& lane = lanes_[l.lane()];
    p.kind = l.kind();
    p.id = l.id();
    p.bytes = Bytes(l.bytes());
    p.device = DeviceId(lane.device);
    p.stream = StreamId(lane.stream);
    return true;
  }
  // Only a complete log has its metadata (a trial reads it once done).
  const TraceMetadata& metadata() const override { return log_.metadata; }
  std::string Location() const override { return fmt::format("event {}", next_ - 1); }

 private:
  [[gnu::noinline]] void Wide(const WideEvent& w, PlainEvent& p) const {
    p.kind = w.kind;
    p.id = w.id;
    p.bytes = Bytes(w.bytes);
    p.device = DeviceId(lanes_[w.lane].device);
    p.stream = StreamId(lanes_[w.lane].stream);
  }
  // At the end of what is published, or at a mark: whether event next_ is
  // to be read (else `stop` says why not, or nothing for the end).
  [[gnu::noinline]] bool AtBoundary(absl::Status& stop) {
    if (next_ >= end_) {
      absl::StatusOr<bool> more = AwaitMore();
      if (!more.ok()) stop = more.status();
      if (!more.ok() || !*more) return false;
    }
    if (next_ != next_mark_) return true;
    next_mark_ += stride_;  // a division per event was a tenth of this function
    // Called off, unless at most a stride is left: less than a resumed run
    // would replay again from the last checkpoint (of a complete log: only
    // the early leader reads a growing one, and it is never called off).
    if (cancel_ != nullptr && cancel_->load(std::memory_order_relaxed) && end_ - next_ > stride_) {
      stop = absl::CancelledError("trial cancelled");
      return false;
    }
    return before_(next_);
  }

  // Whether event next_ is (or will be) there; waits while the log grows.
  absl::StatusOr<bool> AwaitMore() {
    for (int spins = 0;; ++spins) {
      // Growth before published: kComplete is stored after the last publish.
      const EventLog::Growth growth = log_.growth.load(std::memory_order_acquire);
      end_ = log_.published.load(std::memory_order_acquire);
      if (next_ < end_) return true;
      if (growth == EventLog::Growth::kComplete) return false;
      if (growth == EventLog::Growth::kDropped) return absl::CancelledError("the event log was dropped");
      // The parse ahead is a little slower than a replay: a short wait.
      if (spins < 64) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }

  const EventLog& log_;
  const LoggedEvent* records_;
  const WideEvent* wide_;
  const EventLane* lanes_;
  uint64_t end_;  // events [0, end_) are there to read
  uint64_t next_;
  uint64_t next_mark_;  // the least multiple of stride_ >= next_ not yet passed
  const uint64_t stride_;
  const std::atomic<bool>* cancel_;  // may be nullptr
  std::function<bool(uint64_t)> before_;
};

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_ENGINE_LOG_READER_H_
