// The little machine every generator writes through: fresh buffer ids, a
// clock that ticks once per event, and the sink's first error kept so the
// generators read as straight-line workload descriptions.
#ifndef HBMSIM_TRACE_GEN_EMITTER_H_
#define HBMSIM_TRACE_GEN_EMITTER_H_

#include <cstdint>
#include <string_view>

#include "trace/gen/generators.h"

namespace hbmsim::trace::gen {

class Emitter {
 public:
  explicit Emitter(const EventSink& sink) : sink_(sink) {}

  // Allocates `bytes` for a new buffer; returns its id.
  uint64_t Alloc(uint64_t bytes, std::string_view tag) {
    Event e;
    e.kind = EventKind::kAlloc;
    e.id = next_id_++;
    e.bytes = Bytes(bytes);
    e.tag = tag;
    Emit(e);
    return e.id;
  }
  void Free(uint64_t id) {
    Event e;
    e.kind = EventKind::kFree;
    e.id = id;
    Emit(e);
  }
  void Mark(std::string_view label) {
    Event e;
    e.kind = EventKind::kMark;
    e.label = label;
    Emit(e);
  }
  uint64_t events() const { return events_; }
  const absl::Status& status() const { return status_; }

 private:
  void Emit(Event& e) {
    if (!status_.ok()) return;
    e.time_us = events_++;
    status_ = sink_(e);
  }

  const EventSink& sink_;
  uint64_t next_id_ = 1;
  uint64_t events_ = 0;
  absl::Status status_;
};

}  // namespace hbmsim::trace::gen

#endif  // HBMSIM_TRACE_GEN_EMITTER_H_
