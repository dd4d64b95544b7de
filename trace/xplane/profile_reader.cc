// A memory profile as a recording: the file opened and read whole
// (IsProfileFile tells a profile by its first 4 KiB: an XSpace protobuf or
// the profiler's memory-profile JSON), and the reader that hands out the
// events BuildProfileTrace made (profile_trace.cc), each with the figures
// its record holds and a location naming that record.
#include <algorithm>
#include <fstream>
#include <iterator>

#include "fmt/format.h"
#include "trace/xplane/memory_profile_json.h"
#include "trace/xplane/profile_trace.h"
#include "trace/xplane/xspace_reader.h"

namespace hbmsim::trace::xplane {

bool IsProfileFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(std::max<std::streamsize>(0, in.gcount())));
  return LooksLikeXSpace(head) || LooksLikeMemoryProfileJson(head);
}

absl::StatusOr<ProfileTrace> ReadProfileTraceFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(fmt::format("cannot open {}", path));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::InvalidArgumentError(fmt::format("{}: read error", path));
  absl::StatusOr<Profile> p = LooksLikeMemoryProfileJson(std::string_view(bytes).substr(0, 4096))
                                  ? ParseMemoryProfile(bytes, path)
                                  : ParseXSpace(bytes, path);
  if (!p.ok()) return p.status();
  return BuildProfileTrace(*std::move(p));
}

absl::StatusOr<bool> ProfileEventReader::Next(Event& e) {
  if (next_ >= trace_.events.size()) return false;
  e = trace_.events[next_++].get();
  return true;
}

// The record's own figures only: a size the reader inferred is not the recording's word.
std::optional<RecordedFigures> ProfileEventReader::current_figures() const {
  if (next_ == 0 || next_ > trace_.events.size()) return std::nullopt;
  const EventOrigin& o = trace_.origins[next_ - 1];
  if (o.device < 0) return std::nullopt;
  const MemoryRecord& r = trace_.devices[o.device].recording.records[o.record];
  if (r.missing != Missing::kNone) return std::nullopt;  // lost, inferred: no figures of its own
  RecordedFigures f;
  f.allocation = r.allocation;
  if (r.allocation) f.addr = r.addr;
  f.chunk_bytes = r.allocation_bytes;
  f.bytes_in_use = r.bytes_allocated;
  f.fragmentation = r.fragmentation;
  f.peak_bytes_in_use = r.peak_bytes_in_use;
  f.where = fmt::format("{} {}", r.allocation ? "MemoryAllocation" : "MemoryDeallocation", r.where);
  return f;
}

std::string ProfileEventReader::Location() const {
  if (next_ == 0 || next_ > trace_.events.size()) return trace_.source;
  const EventOrigin& o = trace_.origins[next_ - 1];
  if (o.device < 0) {
    const uint32_t d = trace_.events[next_ - 1].event.device.value();
    const std::string name = d < trace_.devices.size() ? trace_.devices[d].recording.name : "?";
    return fmt::format("{}: event {} (start state of {})", trace_.source, next_, name);
  }
  return fmt::format("{}: {}", trace_.source, trace_.devices[o.device].recording.records[o.record].where);
}

}  // namespace hbmsim::trace::xplane
