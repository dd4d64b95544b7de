#include "trace/pprof/held_events.h"

#include "fmt/format.h"
#include "trace/core/python_frames.h"

namespace hbmsim::trace::pprof {
namespace {

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// An attribute value must stay one `key=value` word when written back.
std::string OneWord(std::string s) {
  for (char& c : s) {
    if (c == ' ' || c == '\t' || c == '=' || c == '\n' || c == '\r') c = '_';
  }
  return s;
}

class HeldEventReader final : public EventReader {
 public:
  HeldEventReader(const HeldState& held, const TraceMetadata& metadata, std::optional<DeviceId> device,
                  std::string source)
      : held_(held), metadata_(metadata), device_(device), source_(std::move(source)) {}

  absl::StatusOr<bool> Next(Event& e) override;
  const TraceMetadata& metadata() const override { return metadata_; }
  std::string Location() const override {
    return fmt::format("{}: buffer {} of device {}", source_, next_id_ - 1, current_device_);
  }
  const ContextTable* context_table() const override { return &held_.table; }
  EventContext context() const override { return context_; }

 private:
  // Moves to the next entry that yields events; false at the end.
  bool Advance();

  const HeldState& held_;
  const TraceMetadata& metadata_;
  std::optional<DeviceId> device_;
  std::string source_;
  size_t device_index_ = 0;
  size_t entry_index_ = 0;
  uint64_t emitted_ = 0;  // of the current entry
  bool started_ = false;
  uint64_t next_id_ = 1;
  uint64_t current_device_ = 0;
  EventContext context_;
  std::string attrs_;
};

bool HeldEventReader::Advance() {
  if (started_) ++entry_index_;
  started_ = true;
  emitted_ = 0;
  while (device_index_ < held_.devices.size()) {
    const HeldDevice& d = held_.devices[device_index_];
    if (device_ && d.device != *device_) {
      ++device_index_;
      entry_index_ = 0;
      continue;
    }
    while (entry_index_ < d.entries.size() &&
           (!PlacedAsEvents(d.entries[entry_index_]) || d.entries[entry_index_].count == 0)) {
      ++entry_index_;
    }
    if (entry_index_ < d.entries.size()) return true;
    ++device_index_;
    entry_index_ = 0;
  }
  return false;
}

absl::StatusOr<bool> HeldEventReader::Next(Event& e) {
  if (!started_ || device_index_ >= held_.devices.size() ||
      emitted_ == held_.devices[device_index_].entries[entry_index_].count) {
    if (!Advance()) return false;
  }
  const HeldDevice& d = held_.devices[device_index_];
  const HeldEntry& entry = d.entries[entry_index_];
  const uint64_t bytes = static_cast<uint64_t>(entry.bytes);
  // N buffers of B bytes: B / N each, the first B mod N one byte more.
  const uint64_t each = bytes / entry.count + (emitted_ < bytes % entry.count ? 1 : 0);
  ++emitted_;
  e = Event{};
  e.kind = EventKind::kAlloc;
  e.id = next_id_++;
  e.bytes = Bytes(each);
  e.device = d.device;
  e.tag = kStartStateTag;
  const std::string frame = UserFrameKey(held_.table, entry.frames);
  attrs_ = fmt::format("kind={}{}", OneWord(entry.kind), frame.empty() ? "" : " frame=" + OneWord(frame));
  e.attrs = attrs_;
  context_ = EventContext{.frames = entry.frames};
  current_device_ = d.device.value();
  return true;
}

}  // namespace

bool PlacedAsEvents(const HeldEntry& e) { return e.kind == "buffer" && e.bytes >= 0; }

std::unique_ptr<EventReader> MakeHeldEventReader(const HeldState& held, const TraceMetadata& metadata,
                                                 std::optional<DeviceId> device, std::string source) {
  return std::make_unique<HeldEventReader>(held, metadata, device, std::move(source));
}

std::string UserFrameKey(const ContextTable& table, uint32_t frames) {
  const std::vector<uint32_t>& list = table.list(frames);
  for (uint32_t id : list) {
    const StackFrame& f = table.frame(id);
    if (IsUserPythonFrame(f)) return fmt::format("{}:{}", BaseName(f.filename), f.line);
  }
  if (list.empty()) return "";
  const StackFrame& f = table.frame(list.front());
  return fmt::format("{}:{}", BaseName(f.filename), f.line);
}

}  // namespace hbmsim::trace::pprof
