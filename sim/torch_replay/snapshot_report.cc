// The snapshot section of `hbmsim replay`'s reports: where the replay
// started, what it took from the recording, how the simulation compares with
// it, the recorded OOMs replayed (PyTorch's text for the simulated state,
// then hbmsim's verdict) and memory_summary() at the end.
#include <iterator>

#include "allocator/torch/torch_messages.h"
#include "fmt/format.h"
#include "sim/torch_replay/snapshot_replay.h"

namespace hbmsim {
namespace {

using Out = std::back_insert_iterator<std::string>;
using Json = nlohmann::ordered_json;

std::string EventText(uint64_t event, std::optional<size_t> entry, DeviceId d) {
  if (!entry) return fmt::format("event {}", event);
  return fmt::format("event {} (device_traces[{}][{}])", event, d.value(), *entry);
}

void WriteSegments(Out out, std::string_view name, const SegmentComparison& c, DeviceId d) {
  fmt::format_to(out, "  {:<16}{}/{} matched", name, c.matched(), c.recorded.size());
  if (c.simulated.size() != c.recorded.size()) fmt::format_to(out, " (simulated {})", c.simulated.size());
  if (const std::optional<size_t> k = c.first_mismatch()) {
    if (*k < c.recorded.size()) {
      const SegmentRecord& r = c.recorded[*k];
      fmt::format_to(out, "; first mismatch at {}: recorded {:#x} size {}, simulated ",
                     EventText(r.event, r.entry, d), r.addr, r.size);
    } else {
      fmt::format_to(out, "; first mismatch: an extra simulated one at event {}: ", c.simulated[*k].event);
    }
    if (*k < c.simulated.size()) {
      fmt::format_to(out, "{:#x} size {}", c.simulated[*k].addr, c.simulated[*k].size);
    } else {
      fmt::format_to(out, "none");
    }
  }
  fmt::format_to(out, "\n");
}

void WriteOom(Out out, const RecordedOom& o, DeviceId d) {
  fmt::format_to(out, "  {}: recorded request {} B, recorded device_free {} B\n",
                 EventText(o.event, o.entry, d), o.size.value(), o.device_free.value());
  if (o.result.ok()) {
    fmt::format_to(out, "    not reproduced: the simulated request fit at {:#x}\n", o.result.offset.value());
    return;
  }
  if (!o.message.empty()) fmt::format_to(out, "    {}\n", o.message);
  fmt::format_to(out, "    hbmsim verdict: {} (rounded {} B, free {} B, largest free block {} B)\n",
                 AllocStatusName(o.result.status), o.result.rounded.value(), o.result.free_bytes.value(),
                 o.result.largest_free_block.value());
}

Json SegmentsJson(const SegmentComparison& c) {
  return Json{{"matched", c.matched()}, {"recorded", c.recorded.size()}, {"simulated", c.simulated.size()}};
}

}  // namespace

std::string SnapshotReplay::TextSection(bool check_recorded) const {
  std::string text;
  Out out(text);
  const StartSummary init = reader_->Start(0);
  fmt::format_to(out, "\nPyTorch snapshot (generation {}), device {}:\n", reader_->generation(),
                 device_.value());
  fmt::format_to(out, "  settings:     {}\n",
                 applied_settings_.empty()
                     ? std::string("none taken from the snapshot")
                     : fmt::format("{} (from the snapshot)", fmt::join(applied_settings_, " ")));
  fmt::format_to(out, "  start state:  {} segments, {} live blocks ({} freed during the trace), {} issues\n",
                 init.segments, init.live_blocks, init.live_blocks_freed_in_trace, init.issues);
  if (seeded_ && seeded_->seeded_segments() > 0) {
    fmt::format_to(
        out, "  seeded:       {} segments, {} live blocks (events 0-{}: their tag=preexisting allocs)\n",
        seeded_->seeded_segments(), seeded_->seeded_blocks(), seeded_->seeded_blocks());
  }
  if (oom_capacity_) {
    fmt::format_to(out,
                   "  oom capacity: {} B = {} B reserved at device_traces[{}][{}] + its device_free {} B\n",
                   oom_capacity_->capacity.value(), oom_capacity_->reserved.value(), device_.value(),
                   oom_capacity_->entry, oom_capacity_->device_free.value());
  }
  if (!checker_) return text;
  if (checker_->empty_cache_calls() > 0) {
    fmt::format_to(out, "  empty_cache:  {} calls (recorded segment_free the policy had not done)\n",
                   checker_->empty_cache_calls());
  }
  if (check_recorded) {
    const RecordedCheck c = checker_->Check();
    fmt::format_to(out, "\nRecorded check: allocs {}/{}, segments {}/{}\n", c.allocs_matched, c.allocs_total,
                   c.segments_matched, c.segments_total);
    if (const auto& m = checker_->first_alloc_mismatch()) {
      fmt::format_to(out, "  first alloc mismatch at {}: recorded {:#x}, simulated {}\n",
                     EventText(m->event, m->entry, device_), m->recorded, m->simulated);
    }
    WriteSegments(out, "segment_alloc", checker_->segment_allocs(), device_);
    WriteSegments(out, "segment_map", checker_->maps(), device_);
    WriteSegments(out, "segment_free", checker_->segment_frees(), device_);
    WriteSegments(out, "segment_unmap", checker_->unmaps(), device_);
  }
  if (!checker_->ooms().empty()) {
    fmt::format_to(out, "\nRecorded OOMs replayed ({}):\n", checker_->ooms().size());
    for (const RecordedOom& o : checker_->ooms()) WriteOom(out, o, device_);
  }
  if (torch_ != nullptr) {
    fmt::format_to(out, "\nmemory_summary() at the end of the replay:\n{}\n",
                   torch::FormatMemorySummary(torch_->torch_stats(), torch_->options().device_index));
  }
  return text;
}

Json SnapshotReplay::JsonSection() const {
  const StartSummary init = reader_->Start(0);
  Json j{{"generation", reader_->generation()},
         {"device", device_.value()},
         {"settings_from_snapshot", applied_settings_},
         {"initial_segments", init.segments},
         {"initial_live_blocks", init.live_blocks}};
  if (oom_capacity_) {
    j["oom_capacity"] = Json{{"capacity", oom_capacity_->capacity.value()},
                             {"reserved", oom_capacity_->reserved.value()},
                             {"device_free", oom_capacity_->device_free.value()},
                             {"entry", oom_capacity_->entry}};
  }
  if (!checker_) return j;
  j["empty_cache_calls"] = checker_->empty_cache_calls();
  j["segment_alloc"] = SegmentsJson(checker_->segment_allocs());
  j["segment_map"] = SegmentsJson(checker_->maps());
  j["segment_free"] = SegmentsJson(checker_->segment_frees());
  j["segment_unmap"] = SegmentsJson(checker_->unmaps());
  Json ooms = Json::array();
  for (const RecordedOom& o : checker_->ooms()) {
    ooms.push_back(Json{{"event", o.event},
                        {"entry", o.entry ? Json(*o.entry) : Json(nullptr)},
                        {"size", o.size.value()},
                        {"device_free", o.device_free.value()},
                        {"kind", AllocStatusName(o.result.status)},
                        {"message", o.message}});
  }
  j["recorded_ooms"] = ooms;
  return j;
}

}  // namespace hbmsim
