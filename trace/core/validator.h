// The semantic checks every trace reader shares (docs/formats/text-trace.md,
// what the reader checks), independent of any allocator:
//
//   buffer ids   alloc       : id not tracked             -> live
//   (per device) free        : live                       -> gone
//                free_requested : live                    -> free_requested
//                free_completed : free_requested          -> gone
//   programs     program_load   : not loaded              -> loaded
//   (per device) program_run    : loaded                  -> loaded
//                program_unload : loaded                  -> gone
//   time         t= never decreases from one stamped event to the next.
//
// Anything else is an error. A program that a TPU policy evicted is still
// loaded here: eviction is the allocator's business, the trace only says
// load/run/unload. Memory is proportional to the ids and programs that are
// live right now, never to the length of the trace.
//
// Every check either succeeds and applies its transition, or fails and
// changes nothing, so a `--lenient` replay can skip the offending line and go
// on with a consistent state. Messages carry no location: the reader prefixes
// "file:line: ".
#ifndef HBMSIM_TRACE_CORE_VALIDATOR_H_
#define HBMSIM_TRACE_CORE_VALIDATOR_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "trace/core/event.h"
#include "trace/core/live_id_table.h"

namespace hbmsim::trace {

// Which buffer ids are live on which device, and whether their free has been
// requested. Importers that see alloc/free pairs in another shape (snapshots,
// logs) reuse this directly.
class LiveBufferIds {
 public:
  enum class State : uint8_t { kLive, kFreeRequested };

  // Alloc and Free run for nearly every event: inline, errors out of line.
  [[gnu::always_inline]] absl::Status Alloc(DeviceId device, BufferId id) {
    const auto [state, inserted] = ids_.TryInsert(KeyOf(device, id), State::kLive);
    if (inserted) [[likely]]
      return absl::OkStatus();
    return AllocOfTracked(device, id, *state);
  }
  [[gnu::always_inline]] absl::Status Free(DeviceId device, BufferId id) {
    State* state = ids_.Find(KeyOf(device, id));
    if (state != nullptr && *state == State::kLive) [[likely]] {
      ids_.Erase(state);
      return absl::OkStatus();
    }
    return Release("free", device, id, /*keep_pending=*/false);
  }
  absl::Status RequestFree(DeviceId device, BufferId id);
  absl::Status CompleteFree(DeviceId device, BufferId id);

  // The state of `id` on `device`, or nullptr when it is not tracked.
  const State* Find(DeviceId device, BufferId id) const;
  // Ids tracked right now (live plus free_requested), over all devices.
  size_t size() const { return ids_.size(); }

 private:
  static DeviceScopedId KeyOf(DeviceId device, BufferId id) { return {device.value(), id.value()}; }
  absl::Status AllocOfTracked(DeviceId device, BufferId id, State state) const;
  // A free or free_requested of `id`, whose keyword is `what`.
  absl::Status Release(std::string_view what, DeviceId device, BufferId id, bool keep_pending);

  // Checked on every buffer event: the id table built for that (not a
  // general hash map, whose tombstones made this the validator's hot spot).
  LiveIdTable<DeviceScopedId, State> ids_;
};

// Which programs are loaded on which device.
class LoadedPrograms {
 public:
  absl::Status Load(DeviceId device, ProgramId id);
  absl::Status Run(DeviceId device, ProgramId id) const;
  absl::Status Unload(DeviceId device, ProgramId id);

  bool Contains(DeviceId device, ProgramId id) const;
  size_t size() const { return loaded_.size(); }

 private:
  using Key = std::pair<uint64_t, uint64_t>;  // (device, program)
  absl::flat_hash_set<Key> loaded_;
};

class TraceValidator {
 public:
  // Checks `e` against everything seen so far and, when it is valid, records
  // it. On error nothing is recorded.
  [[gnu::always_inline]] absl::Status Check(const Event& e) {
    // Time first: a failed check must leave the id sets untouched.
    if (e.time_us.has_value() && last_time_us_.has_value() && *e.time_us < *last_time_us_) [[unlikely]] {
      return TimeWentBack(*e.time_us);
    }
    absl::Status s = Apply(e);
    if (s.ok() && e.time_us.has_value()) last_time_us_ = e.time_us;
    return s;
  }

  const LiveBufferIds& buffers() const { return buffers_; }
  const LoadedPrograms& programs() const { return programs_; }
  // The latest `t=` accepted so far, if any event carried one.
  std::optional<uint64_t> last_time_us() const { return last_time_us_; }

 private:
  absl::Status TimeWentBack(uint64_t time_us) const;
  [[gnu::always_inline]] absl::Status Apply(const Event& e) {
    if (e.kind == EventKind::kAlloc) return buffers_.Alloc(e.device, e.buffer());
    if (e.kind == EventKind::kFree) return buffers_.Free(e.device, e.buffer());
    return ApplyOther(e);
  }
  absl::Status ApplyOther(const Event& e);

  LiveBufferIds buffers_;
  LoadedPrograms programs_;
  std::optional<uint64_t> last_time_us_;
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_CORE_VALIDATOR_H_
