// The reader the viz recorders put between the replay and the recording: it
// passes every event on unchanged and shows it to its owner first, so the
// owner sees each event as the engine reads it (before the engine applies
// it). An owner with a BeforeRead() is called before each read too (the
// timeline samples the state the previous event left).
#ifndef HBMSIM_SIM_VIZ_TAP_READER_H_
#define HBMSIM_SIM_VIZ_TAP_READER_H_

#include <string>

#include "absl/status/statusor.h"
#include "sim/layer.h"
#include "trace/core/reader.h"

namespace hbmsim::sim::viz {

// `Owner` has Track(const Event&), and may have BeforeRead(); it befriends
// TapReader<Owner> when they are private.
template <typename Owner>
class TapReader : public EventReader {
 public:
  TapReader(Owner& owner, EventReader& inner) : owner_(owner), inner_(inner) {}
  absl::StatusOr<bool> Next(Event& e) override {
    if constexpr (requires { owner_.BeforeRead(); }) owner_.BeforeRead();
    absl::StatusOr<bool> more = inner_.Next(e);
    if (more.ok() && *more) owner_.Track(e);
    return more;
  }
  const TraceMetadata& metadata() const override { return inner_.metadata(); }
  std::string Location() const override { return inner_.Location(); }
  const ContextTable* context_table() const override { return inner_.context_table(); }
  EventContext context() const override { return inner_.context(); }

 private:
  Owner& owner_;
  EventReader& inner_;
};

}  // namespace hbmsim::sim::viz

#endif  // HBMSIM_SIM_VIZ_TAP_READER_H_
