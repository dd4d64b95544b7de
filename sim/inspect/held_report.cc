#include "sim/inspect/held_report.h"

#include <algorithm>
#include <map>

#include "fmt/format.h"
#include "sim/config/policy_registry.h"
#include "sim/layer.h"
#include "sim/report/user_frames.h"
#include "trace/core/json_text.h"

namespace hbmsim::sim::inspect {
namespace {

using Json = nlohmann::ordered_json;

// The group key of a stack: its innermost user frame, else its innermost frame, said so.
std::pair<std::string, std::string> FrameKey(const ContextTable& table, uint32_t frames) {
  const std::vector<uint32_t>& list = table.list(frames);
  for (uint32_t id : list) {
    if (IsUserFrame(table.frame(id))) return {ShortFrameText(table.frame(id)), FrameText(table.frame(id))};
  }
  if (list.empty()) return {"(no stack recorded)", ""};
  const StackFrame& f = table.frame(list.front());
  return {"(no user frame) " + ShortFrameText(f), FrameText(f)};
}

void Add(HeldGroup& g, const HeldEntry& e) {
  g.count += e.count;
  if (e.bytes >= 0) {
    g.bytes += Bytes(static_cast<uint64_t>(e.bytes));
  } else {
    g.unknown_size += e.count;
  }
}

std::vector<HeldGroup> Sorted(std::map<std::string, HeldGroup> groups) {
  std::vector<HeldGroup> out;
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(), [](const HeldGroup& a, const HeldGroup& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.count > b.count;
  });
  return out;
}

// By kind and by frame (the frame key carries the kind when there are several).
void Group(const ContextTable& table, const std::vector<HeldEntry>& entries, std::vector<HeldGroup>& kinds,
           std::vector<HeldGroup>& frames) {
  std::map<std::string, HeldGroup> by_kind, by_frame;
  for (const HeldEntry& e : entries) {
    HeldGroup& k = by_kind[e.kind];
    k.key = e.kind;
    Add(k, e);
    auto [key, detail] = FrameKey(table, e.frames);
    key = fmt::format("{}  [{}]", key, e.kind);
    HeldGroup& f = by_frame[key];
    f.key = key;
    f.detail = detail;
    Add(f, e);
  }
  kinds = Sorted(std::move(by_kind));
  frames = Sorted(std::move(by_frame));
}

absl::Status AddProbes(std::shared_ptr<const Recording> recording, const HeldOptions& options,
                       HeldReport& report) {
  if (options.probes.empty()) return absl::OkStatus();
  if (!report.limit) {
    return absl::InvalidArgumentError(
        "--probe needs --bytes-limit (or an --allocator preset with a bytes_limit, such as "
        "configs/tpu_v3.yaml): "
        "a device memory profile records no device capacity");
  }
  for (HeldDeviceReport& d : report.devices) {
    absl::StatusOr<AllocatorConfig> config = HeldPolicy(recording, d.device, options.allocator);
    if (!config.ok()) return config.status();
    report.policy = config->policy->name;
    for (Bytes size : options.probes) {
      absl::StatusOr<HeldProbe> p = ProbeHeld(recording, d.device, *config, *report.limit, size);
      if (!p.ok()) return p.status();
      d.probes.push_back(*p);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<HeldReport> MakeHeldReport(std::shared_ptr<const Recording> recording,
                                          const HeldOptions& options) {
  const HeldState* held = recording->facts().held_state.get();
  if (held == nullptr)
    return absl::InvalidArgumentError(fmt::format("{} holds no held state", recording->path()));
  HeldReport report;
  report.file = recording->path();
  report.source = held->source;
  report.limit = options.limit;
  if (options.limit) report.limit_source = "--bytes-limit";
  // A device preset (configs/tpu_v3.yaml) carries its HBM size: the limit when none is given.
  if (!options.limit && !options.allocator.empty()) {
    absl::StatusOr<AllocatorConfig> preset = ResolveAllocator(BuiltinPolicies(), options.allocator);
    if (preset.ok() && preset->bytes_limit) {
      report.limit = preset->bytes_limit;
      report.limit_source = fmt::format("bytes_limit of {}", options.allocator);
    }
  }
  for (const auto& [key, value] : recording->facts().metadata.entries) {
    if (key == "warning") report.warnings.push_back(value);
  }
  for (const HeldDevice& d : held->devices) {
    if (options.device && d.device != *options.device) continue;
    if (!options.device_name.empty() && d.name != options.device_name) continue;
    HeldDeviceReport r;
    r.device = d.device;
    r.name = d.name;
    for (const HeldEntry& e : d.entries) {
      if (e.kind != "buffer" || e.bytes < 0) continue;
      r.buffers += e.count;
      r.buffer_bytes += Bytes(static_cast<uint64_t>(e.bytes));
    }
    Group(held->table, d.entries, r.kinds, r.frames);
    report.devices.push_back(std::move(r));
  }
  if ((options.device || !options.device_name.empty()) && report.devices.empty()) {
    std::vector<std::string> names;
    for (const HeldDevice& d : held->devices)
      names.push_back(fmt::format("{} ({})", d.device.value(), d.name));
    return absl::InvalidArgumentError(
        fmt::format("--device {}: {} holds nothing on it; devices: {}",
                    options.device ? fmt::format("{}", options.device->value()) : options.device_name,
                    report.file, names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
  }
  Group(held->table, held->unplaced, report.unplaced_kinds, report.unplaced_frames);
  if (absl::Status s = AddProbes(std::move(recording), options, report); !s.ok()) return s;
  return report;
}

bool AnyHeldProbeFailed(const HeldReport& r) {
  for (const HeldDeviceReport& d : r.devices) {
    for (const HeldProbe& p : d.probes) {
      if (!p.placed_all || !p.result.ok()) return true;
    }
  }
  return false;
}

namespace {

Json GroupsJson(const std::vector<HeldGroup>& groups) {
  Json out = Json::array();
  for (const HeldGroup& g : groups) {
    Json j{{"key", g.key}, {"count", g.count}, {"bytes", g.bytes.value()}, {"unknown_size", g.unknown_size}};
    if (!g.detail.empty()) j["frame"] = g.detail;
    out.push_back(std::move(j));
  }
  return out;
}

Json ProbeJson(const HeldProbe& p) {
  Json j{{"requested", p.requested.value()},
         {"placed_all_buffers", p.placed_all},
         {"in_use_before", p.in_use_before.value()}};
  if (!p.placed_all) {
    j["placement_failures"] = p.placement_failures;
    j["verdict"] = "held buffers do not fit";
    return j;
  }
  j["verdict"] = p.result.ok() ? "fits" : std::string(AllocStatusName(p.result.status));
  j["rounded"] = p.result.rounded.value();
  if (p.result.ok() && p.result.has_offset) j["offset"] = p.result.offset.value();
  if (!p.result.ok()) {
    j["free"] = p.result.free_bytes.value();
    j["largest_free"] = p.result.largest_free_block.value();
  }
  return j;
}

}  // namespace

Json RenderHeldJson(const HeldReport& r) {
  Json devices = Json::array();
  for (const HeldDeviceReport& d : r.devices) {
    Json j{{"device", d.device.value()},
           {"name", d.name},
           {"buffers", d.buffers},
           {"buffer_bytes", d.buffer_bytes.value()}};
    if (r.limit)
      j["headroom"] = static_cast<int64_t>(r.limit->value()) - static_cast<int64_t>(d.buffer_bytes.value());
    j["by_kind"] = GroupsJson(d.kinds);
    j["by_frame"] = GroupsJson(d.frames);
    Json probes = Json::array();
    for (const HeldProbe& p : d.probes) probes.push_back(ProbeJson(p));
    if (!d.probes.empty()) j["probes"] = std::move(probes);
    devices.push_back(std::move(j));
  }
  Json out{{"file", r.file}, {"source", r.source}};
  out["bytes_limit"] = r.limit ? Json(r.limit->value()) : Json(nullptr);
  if (!r.policy.empty()) out["probe_policy"] = r.policy;
  out["devices"] = std::move(devices);
  out["no_device"] =
      Json{{"by_kind", GroupsJson(r.unplaced_kinds)}, {"by_frame", GroupsJson(r.unplaced_frames)}};
  out["warnings"] = r.warnings;
  return out;
}

std::string HeldJsonText(const HeldReport& r) { return JsonText(RenderHeldJson(r), 2) + "\n"; }

}  // namespace hbmsim::sim::inspect
