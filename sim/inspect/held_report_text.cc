// The text of a held-state report (held_report.h).
#include <iterator>

#include "fmt/format.h"
#include "sim/inspect/held_report.h"
#include "sim/layer.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim::inspect {
namespace {

using Out = std::back_insert_iterator<std::string>;

std::string BytesText(Bytes b) { return fmt::format("{} B ({})", b.value(), HumanReadableNumBytes(b)); }

std::string SignedBytesText(int64_t b) { return fmt::format("{} B ({})", b, HumanReadableNumBytes(b)); }

void WriteGroups(Out out, std::string_view title, const std::vector<HeldGroup>& groups, Bytes total,
                 size_t most) {
  const size_t n = std::min(groups.size(), most);
  fmt::format_to(out, "  {}{}\n", title,
                 n < groups.size() ? fmt::format(" ({} of {} listed)", n, groups.size()) : "");
  for (size_t i = 0; i < n; ++i) {
    const HeldGroup& g = groups[i];
    const double share = total.value() == 0 ? 0.0
                                            : 100.0 * static_cast<double>(g.bytes.value()) /
                                                  static_cast<double>(total.value());
    fmt::format_to(out, "    {:>6.1f}% {:>14} {:>10} {:>7}  {}{}\n", share, g.bytes.value(),
                   HumanReadableNumBytes(g.bytes), g.count, g.key,
                   g.unknown_size > 0 ? fmt::format("  ({} of unknown size)", g.unknown_size) : "");
  }
}

void WriteProbe(Out out, const HeldReport& r, const HeldProbe& p) {
  fmt::format_to(out, "  probe {}: ", BytesText(p.requested));
  if (!p.placed_all) {
    fmt::format_to(out, "not asked: {} of the held buffers already fail under {} at {}\n",
                   p.placement_failures, r.policy, BytesText(*r.limit));
    return;
  }
  const AllocResult& a = p.result;
  const std::string taken = fmt::format("; the buffers take {} under {}", BytesText(p.in_use_before), r.policy);
  if (a.ok()) {
    fmt::format_to(out, "fits under {} (rounded to {}{}{})\n", r.policy, a.rounded.value(),
                   a.has_offset ? fmt::format(", placed at {:#x}", a.offset.value()) : "", taken);
    return;
  }
  fmt::format_to(out, "does not fit under {}: {} ({} rounded; {} free, largest free block {}{})\n", r.policy,
                 AllocStatusName(a.status), a.rounded.value(), BytesText(a.free_bytes), BytesText(a.largest_free_block),
                 taken);
}

void WriteDevice(Out out, const HeldReport& r, const HeldDeviceReport& d) {
  fmt::format_to(out, "\nDevice {} ({}): {} buffers, {}\n", d.device.value(), d.name, d.buffers,
                 BytesText(d.buffer_bytes));
  if (r.limit) {
    const int64_t headroom =
        static_cast<int64_t>(r.limit->value()) - static_cast<int64_t>(d.buffer_bytes.value());
    fmt::format_to(out, "  headroom under {} ({}): {}{}\n", BytesText(*r.limit), r.limit_source,
                   SignedBytesText(headroom), headroom < 0 ? ": the live buffers alone exceed the limit" : "");
  }
  WriteGroups(out, "by kind", d.kinds, d.buffer_bytes, d.kinds.size());
  WriteGroups(out, "by frame (the innermost frame of the user's own code)", d.frames, d.buffer_bytes,
              kTextFrames);
  for (const HeldProbe& p : d.probes) WriteProbe(out, r, p);
}

}  // namespace

std::string RenderHeldText(const HeldReport& r) {
  std::string text;
  Out out(text);
  uint64_t buffers = 0;
  Bytes bytes;
  for (const HeldDeviceReport& d : r.devices) {
    buffers += d.buffers;
    bytes += d.buffer_bytes;
  }
  fmt::format_to(out, "{}: {}, what was live when it was taken: {} device{}, {} buffers holding {}\n", r.file,
                 r.source, r.devices.size(), r.devices.size() == 1 ? "" : "s", buffers, BytesText(bytes));
  for (const HeldDeviceReport& d : r.devices) WriteDevice(out, r, d);
  if (!r.unplaced_kinds.empty()) {
    Bytes total;
    for (const HeldGroup& g : r.unplaced_kinds) total += g.bytes;
    fmt::format_to(out, "\nOn no device (the profile names none for them): {}\n", BytesText(total));
    WriteGroups(out, "by kind", r.unplaced_kinds, total, r.unplaced_kinds.size());
    WriteGroups(out, "by frame", r.unplaced_frames, total, kTextFrames);
  }
  if (!r.policy.empty()) {
    fmt::format_to(
        out,
        "\nPlacement assumed by the probes: a profile records no addresses, so each device's buffers "
        "were placed through {} from an empty allocator at the limit, in the file's order, before the "
        "request: the most compact heap {} reaches for them. The job's own heap, shaped by what it "
        "freed in between, can be more fragmented: \"fits\" is a best case; an oom is certain.\n",
        r.policy, r.policy);
  }
  for (const std::string& w : r.warnings) fmt::format_to(out, "Note: {}\n", w);
  return text;
}

}  // namespace hbmsim::sim::inspect
