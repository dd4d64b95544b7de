#include "sim/xplane_replay/xplane_replay.h"

#include "fmt/format.h"
#include "sim/engine/open_trace.h"
#include "trace/core/numbers.h"

namespace hbmsim {
namespace {

bool IsHostAllocator(std::string_view name) { return name.find("host") != std::string_view::npos; }

// Sets `name` unless the config (a YAML preset) already departs from the default there.
void SetIfDefault(AllocatorConfig& config, std::string_view name, bool v, std::vector<std::string>& applied) {
  const OptionValues defaults = OptionValues::Defaults(config.policy->options);
  const auto find = [&](const OptionValues& o) -> const OptionValue* {
    for (const auto& [k, value] : o.entries()) {
      if (k == name) return &value;
    }
    return nullptr;
  };
  const OptionValue* now = find(config.options);
  const OptionValue* def = find(defaults);
  if (now == nullptr || def == nullptr || *now != *def) return;
  applied.push_back(fmt::format("{}={}", name, v));
  config.options.Set(name, v);
}

std::string DeviceList(const xplane::ProfileTrace& t) {
  std::string out;
  for (size_t d = 0; d < t.devices.size(); ++d) {
    out += fmt::format("{}{} ({})", d == 0 ? "" : ", ", d, t.devices[d].recording.name);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<XplaneReplay>> XplaneReplay::OpenIfProfile(const std::string& path,
                                                                          const std::string& device) {
  absl::StatusOr<TraceFormat> format = DetectTraceFormat(path);
  if (!format.ok() || (*format != TraceFormat::kXplane && *format != TraceFormat::kMemoryProfile)) {
    return std::unique_ptr<XplaneReplay>();  // OpenTrace reports anything else
  }
  absl::StatusOr<xplane::ProfileTrace> t = xplane::ReadProfileTraceFile(path);
  if (!t.ok()) return absl::InvalidArgumentError(t.status().message());
  auto r = std::make_unique<XplaneReplay>();
  if (!device.empty()) {
    std::optional<uint32_t> d = t->DeviceNamed(device);
    if (!d) {
      absl::StatusOr<uint64_t> n = ParseU64(device);
      if (n.ok() && *n < t->devices.size()) d = static_cast<uint32_t>(*n);
    }
    if (!d) {
      return absl::InvalidArgumentError(
          fmt::format("--device {}: {} has no such allocator (devices: {})", device, path, DeviceList(*t)));
    }
    r->device_ = *d;
  }
  r->reader_ = std::make_unique<xplane::ProfileEventReader>(*std::move(t));
  return r;
}

std::optional<Bytes> XplaneReplay::limit() const {
  const std::optional<int64_t> l = trace().devices[device_].start.limit;
  if (!l || *l <= 0) return std::nullopt;
  return Bytes(static_cast<uint64_t>(*l));
}

void XplaneReplay::Configure(AllocatorConfig& config) {
  if (config.policy == nullptr || config.policy->name != "bfc") return;
  const bool host = IsHostAllocator(device_name());
  const bool tf = trace().framework == "tensorflow";
  // The fragmentation readings tell whether the pool was the whole limit; else the name tells.
  const xplane::StartState& start = trace().devices[device_].start;
  SetIfDefault(config, "allow_growth", start.pool_estimate ? start.grown : host, applied_);
  SetIfDefault(config, "garbage_collection", tf && !host, applied_);
  SetIfDefault(config, "region_coalescing", tf && !host, applied_);
}

absl::StatusOr<Allocator*> XplaneReplay::Prepare(Allocator& built, bool check_recorded) {
  if (!check_recorded) return &built;
  checker_ = std::make_unique<RecordedChecker>(built, trace(), device_);
  return checker_.get();
}

std::string XplaneReplay::TextSection() const {
  const xplane::ProfileDevice& dev = trace().devices[device_];
  const xplane::StartState& s = dev.start;
  std::string out =
      fmt::format("\nProfile ({}, {}): device {} = {}: {} allocations, {} deallocations\n", trace().form,
                  trace().framework.empty() ? "framework unknown" : trace().framework, device_,
                  dev.recording.name, dev.recording.allocations, dev.recording.deallocations);
  out += fmt::format(
      "  start state (inferred): {} bytes in use before the first record, {} of them unknown; "
      "region base {:#x}\n",
      s.bytes_in_use_before, s.unknown_bytes, s.base());
  for (const std::string& note : s.notes) out += fmt::format("  note: {}\n", note);
  if (!applied_.empty()) {
    std::string list;
    for (const std::string& a : applied_) list += (list.empty() ? "" : " ") + a;
    out += fmt::format("  options from the recording: {}\n", list);
  }
  if (!checker_) return out;
  out += "  recorded check (records of this device):\n";
  for (int m = 0; m < kNumRecordedMeasures; ++m) {
    const MeasureCount& c = checker_->count(static_cast<RecordedMeasure>(m));
    out += fmt::format("    {:<18} {:>6} of {:>6} match",
                       RecordedMeasureName(static_cast<RecordedMeasure>(m)), c.matched, c.total);
    out += c.first_mismatch ? fmt::format("; first mismatch: {}\n", *c.first_mismatch) : "\n";
  }
  return out;
}

nlohmann::ordered_json XplaneReplay::JsonSection() const {
  const xplane::ProfileDevice& dev = trace().devices[device_];
  const xplane::StartState& s = dev.start;
  nlohmann::ordered_json j;
  j["form"] = trace().form;
  j["framework"] = trace().framework;
  j["device"] = device_;
  j["allocator_name"] = dev.recording.name;
  j["allocations"] = dev.recording.allocations;
  j["deallocations"] = dev.recording.deallocations;
  j["bytes_in_use_before"] = s.bytes_in_use_before;
  j["unknown_bytes_before"] = s.unknown_bytes;
  j["region_base"] = s.base();
  if (s.limit) j["limit"] = *s.limit;
  j["notes"] = s.notes;
  j["options_from_recording"] = applied_;
  if (checker_) {
    nlohmann::ordered_json c;
    for (int m = 0; m < kNumRecordedMeasures; ++m) {
      const MeasureCount& mc = checker_->count(static_cast<RecordedMeasure>(m));
      nlohmann::ordered_json one{{"matched", mc.matched}, {"total", mc.total}};
      if (mc.first_mismatch) one["first_mismatch"] = *mc.first_mismatch;
      c[std::string(RecordedMeasureName(static_cast<RecordedMeasure>(m)))] = one;
    }
    j["recorded_check"] = c;
  }
  return j;
}

}  // namespace hbmsim
