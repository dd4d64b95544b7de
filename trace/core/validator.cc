#include "trace/core/validator.h"

#include <string>

#include "fmt/format.h"

namespace hbmsim::trace {
namespace {

// "id 7", or "id 7 on device 1" for multi-device traces: device 0 is the
// common case and the suffix would only be noise there.
std::string Subject(std::string_view noun, DeviceId device, uint64_t id) {
  if (device.value() == 0) return fmt::format("{} {}", noun, id);
  return fmt::format("{} {} on device {}", noun, id, device.value());
}

absl::Status UnknownProgram(std::string_view what, DeviceId device, ProgramId id) {
  return absl::InvalidArgumentError(fmt::format("{} of unknown {} (never loaded, or unloaded)", what,
                                                Subject("program", device, id.value())));
}

}  // namespace

absl::Status LiveBufferIds::AllocOfTracked(DeviceId device, BufferId id, State state) const {
  const bool pending = state == State::kFreeRequested;
  return absl::InvalidArgumentError(
      fmt::format("alloc of {} that is still live{}", Subject("id", device, id.value()),
                  pending ? " (free_requested, but no free_completed yet)" : ""));
}

absl::Status LiveBufferIds::RequestFree(DeviceId device, BufferId id) {
  return Release("free_requested", device, id, /*keep_pending=*/true);
}

absl::Status LiveBufferIds::Release(std::string_view what, DeviceId device, BufferId id, bool keep_pending) {
  State* state = ids_.Find(KeyOf(device, id));
  if (state == nullptr) {
    return absl::InvalidArgumentError(
        fmt::format("{} of {} that is not live", what, Subject("id", device, id.value())));
  }
  if (*state == State::kFreeRequested) {
    // A second release of the same buffer: a double free in the recording.
    return absl::InvalidArgumentError(
        fmt::format("{} of {} that was already free_requested", what, Subject("id", device, id.value())));
  }
  if (keep_pending) {
    *state = State::kFreeRequested;
  } else {
    ids_.Erase(state);
  }
  return absl::OkStatus();
}

absl::Status LiveBufferIds::CompleteFree(DeviceId device, BufferId id) {
  State* state = ids_.Find(KeyOf(device, id));
  if (state == nullptr || *state != State::kFreeRequested) {
    return absl::InvalidArgumentError(fmt::format("free_completed of {} without a pending free_requested",
                                                  Subject("id", device, id.value())));
  }
  ids_.Erase(state);
  return absl::OkStatus();
}

const LiveBufferIds::State* LiveBufferIds::Find(DeviceId device, BufferId id) const {
  return ids_.Find(KeyOf(device, id));
}

absl::Status LoadedPrograms::Load(DeviceId device, ProgramId id) {
  if (loaded_.insert({device.value(), id.value()}).second) return absl::OkStatus();
  return absl::InvalidArgumentError(
      fmt::format("program_load of {} that is already loaded", Subject("program", device, id.value())));
}

absl::Status LoadedPrograms::Run(DeviceId device, ProgramId id) const {
  if (Contains(device, id)) return absl::OkStatus();
  return UnknownProgram("program_run", device, id);
}

absl::Status LoadedPrograms::Unload(DeviceId device, ProgramId id) {
  if (loaded_.erase(Key{device.value(), id.value()}) == 1) return absl::OkStatus();
  return UnknownProgram("program_unload", device, id);
}

bool LoadedPrograms::Contains(DeviceId device, ProgramId id) const {
  return loaded_.contains(Key{device.value(), id.value()});
}

absl::Status TraceValidator::TimeWentBack(uint64_t time_us) const {
  return absl::InvalidArgumentError(
      fmt::format("t={} is earlier than t={} of a previous event (time stamps must be non-decreasing)",
                  time_us, *last_time_us_));
}

absl::Status TraceValidator::ApplyOther(const Event& e) {
  switch (e.kind) {
    case EventKind::kAlloc:
      return buffers_.Alloc(e.device, e.buffer());
    case EventKind::kFree:
      return buffers_.Free(e.device, e.buffer());
    case EventKind::kFreeRequested:
      return buffers_.RequestFree(e.device, e.buffer());
    case EventKind::kFreeCompleted:
      return buffers_.CompleteFree(e.device, e.buffer());
    case EventKind::kProgramLoad:
      return programs_.Load(e.device, e.program());
    case EventKind::kProgramRun:
      return programs_.Run(e.device, e.program());
    case EventKind::kProgramUnload:
      return programs_.Unload(e.device, e.program());
    case EventKind::kMark:
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace hbmsim::trace
