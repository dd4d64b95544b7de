// `hbmsim convert IN OUT [--format text|binary|binary-zstd]`: reads any trace
// OpenTrace understands (text, .hbt, RMM logs, ...) and writes it as text or
// as the .hbt binary encoding, one event at a time, so a file of any length
// converts in the memory of what is live in it.
//
// A text trace or .hbt has no runtime of its own, so the header keeps what
// the scenario would have taken from the original (sim/scenario/
// scenario_config.h): `# allocator:` (the policy whose runtime wrote it),
// `# device:` (the device a replay of the original picks, when it holds
// several), `# allocator_settings:` (the options that device's recorded
// settings set) and `# device_bytes:` (the capacity its recorded OOM implies,
// or the limit it states), and each other device's own settings and limit as
// `# allocator_settings.device_N:` and `# device_bytes.device_N:`. Replaying
// OUT, any device of it, then needs no more flags than replaying IN did; what
// cannot be kept (a setting whose value holds a space, a start state's cached
// segments, the segment calls a replay acts on) is said on stderr, with the
// flags that restore it where flags can.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sim/cli/command.h"
#include "sim/layer.h"
#include "sim/scenario/scenario_config.h"
#include "trace/formats/format_table.h"
#include "trace/binary/trace_sink.h"
#include "trace/io/output_file.h"
#include "trace/io/path_identity.h"

namespace hbmsim::sim::cli {
namespace {

class ConvertCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("IN", in_, "the trace to read (any format hbmsim replay reads)")->required();
    app.add_option("OUT", out_, "where to write it")->required();
    app.add_option("--format", format_,
                   "text, binary (.hbt) or binary-zstd (.hbt.zst); default: from OUT's extension")
        ->check(CLI::IsMember({"text", "binary", "binary-zstd"}));
  }

  int Run() override {
    std::optional<std::string> error = Convert();
    FlushNotes(error ? kExitBadInput : kExitOk);
    if (error) {
      PrintError(fmt::format("hbmsim convert: {}", OneLineMessage(*error)));
      return kExitBadInput;
    }
    return kExitOk;
  }

 private:
  // OUT is checked against IN and created before anything is read, so a bad
  // OUT costs no time and never replaces IN; OUT appears only complete.
  std::optional<std::string> Convert() {
    if (absl::Status s = io::CheckOutputsAreNotInputs(WithPartnerFiles({{"IN", in_}}), {{"OUT", out_}});
        !s.ok()) {
      return std::string(s.message());
    }
    absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::Create(out_);
    if (!out.ok()) return std::string(out.status().message());
    absl::StatusOr<std::unique_ptr<Recording>> recording = OpenRecording(in_);
    if (!recording.ok()) return std::string(recording.status().message());
    absl::StatusOr<std::unique_ptr<EventReader>> reader = (*recording)->Events(std::nullopt);
    if (!reader.ok()) return std::string(reader.status().message());
    // What a reader skipped is said on stderr too; the header keeps it as `# warning:` lines.
    for (const auto& [key, value] : (*reader)->metadata().entries) {
      if (key == "warning") Note(fmt::format("hbmsim convert: warning: {}", value));
    }
    absl::StatusOr<std::unique_ptr<TraceSink>> sink =
        MakeTraceSink((*out)->stream(), format_.empty() ? TraceFormatForPath(out_) : format_);
    if (!sink.ok()) return std::string(sink.status().message());
    TraceMetadata header = (*reader)->metadata();
    KeepScenario(**recording, header);
    if (absl::Status s = (*sink)->WriteHeader(header); !s.ok()) return WriteError(**out, **recording, s);
    Event e;
    while (true) {
      absl::StatusOr<bool> got = (*reader)->Next(e);
      if (!got.ok()) return std::string(got.status().message());
      if (!*got) break;
      if (absl::Status s = (*sink)->Write(e); !s.ok()) {
        if (!(*out)->status().ok()) return std::string((*out)->status().message());
        return fmt::format("{}: {}", (*reader)->Location(), std::string(s.message()));
      }
    }
    if (absl::Status s = (*sink)->Finish(); !s.ok()) return WriteError(**out, **recording, s);
    if (absl::Status s = (*out)->Commit(); !s.ok()) return std::string(s.message());
    return std::nullopt;
  }

  // The header entries that carry the original's allocator, settings and
  // limit (see the top of this file); a note for each thing left out.
  void KeepScenario(const Recording& r, TraceMetadata& header) {
    const PolicySpec* policy = RecordedPolicy(r);
    if (policy == nullptr) return;
    if (header.Find(kAllocatorKey) == nullptr) header.entries.emplace_back(kAllocatorKey, policy->name);
    const std::vector<DeviceEvents> listed = r.facts().devices.value_or(std::vector<DeviceEvents>{});
    std::vector<DeviceId> ids;
    for (const DeviceEvents& d : listed) ids.push_back(d.device);
    // The device a replay of the original picks; a streamed OUT would pick
    // the first event's, so the header names it when there is a choice.
    DeviceId device(0);
    if (!listed.empty()) {
      absl::StatusOr<std::pair<DeviceId, std::string>> chosen = ChooseDevice(r, listed, std::nullopt);
      if (!chosen.ok()) return;  // a recording with no device to replay: nothing to keep
      device = chosen->first;
      if (ids.size() > 1 && header.Find(kDeviceKey) == nullptr) {
        header.entries.emplace_back(kDeviceKey, fmt::format("{}", device.value()));
      }
    }
    if (r.facts().devices && ids.empty()) {
      // Nothing to replay: the notes below would describe events that are not there.
      Note(fmt::format(
          "hbmsim convert: {}: {} holds no events, so neither does it{}", out_, in_,
          r.facts().state_only ? fmt::format(" (`hbmsim inspect {}` reads the state it holds)", in_) : ""));
      return;
    }
    if (header.Find(kAllocatorSettingsKey) == nullptr) KeepSettings(r, *policy, device, ids, header);
    KeepLimit(r, device, ids, header);
    KeepStartState(r, ids.empty() ? std::vector<DeviceId>{device} : ids);
    if (r.facts().records_side_entries) {
      Note(fmt::format("hbmsim convert: {}: the recorded segment calls are kept as marks, which a replay does "
                       "not act on: --check-recorded has no segments to compare, and a segment the job released "
                       "stays cached",
                       out_));
    }
  }

  // The option edits `device`'s settings make, as # allocator_settings:, and
  // each other device's as its own # allocator_settings.device_N:.
  void KeepSettings(const Recording& r, const PolicySpec& policy, DeviceId device, const std::vector<DeviceId>& ids,
                    TraceMetadata& header) {
    KeepEdits(RecordedOptionEdits(r, policy, device), std::string(kAllocatorSettingsKey), "", header);
    for (const DeviceId other : ids) {
      if (other == device) continue;
      KeepEdits(RecordedOptionEdits(r, policy, other), PerDeviceKey(kAllocatorSettingsKey, other),
                fmt::format("--device {} ", other.value()), header);
    }
  }

  void KeepEdits(std::vector<std::string> kept, const std::string& key, const std::string& flags,
                 TraceMetadata& header) {
    // A value with a space would split in two when read back.
    std::vector<std::string> spaced;
    std::erase_if(kept, [&](const std::string& edit) {
      if (edit.find_first_of(" \t") == std::string::npos) return false;
      spaced.push_back(edit);
      return true;
    });
    if (!kept.empty() && header.Find(key) == nullptr) {
      header.entries.emplace_back(key, fmt::format("{}", fmt::join(kept, " ")));
    }
    if (!spaced.empty()) {
      Note(fmt::format("hbmsim convert: {}: not kept (a space in the value): {}; replay it with {}--set KEY=VALUE",
                       out_, fmt::join(spaced, ", "), flags));
    }
  }

  // The limit a replay of the original takes from the recording for `device`,
  // as # device_bytes:, and each other device's as its own.
  void KeepLimit(const Recording& r, DeviceId device, const std::vector<DeviceId>& ids, TraceMetadata& header) {
    for (const DeviceId d : ids.empty() ? std::vector<DeviceId>{device} : ids) {
      std::optional<Bytes> limit;  // the capacity its recorded OOM implies, else the limit it states
      if (const std::optional<OomCapacity> oom = r.facts().device(d).recorded_oom) {
        limit = oom->capacity;
      } else if (const std::optional<RecordedLimit> stated = r.facts().device(d).limit) {
        limit = stated->limit;
      }
      if (!limit) continue;
      const std::string key = d == device ? std::string(kDeviceBytesKey) : PerDeviceKey(kDeviceBytesKey, d);
      if (header.Find(key) == nullptr) header.entries.emplace_back(key, fmt::format("{}", limit->value()));
    }
  }

  // A snapshot's live blocks become allocations at the start of OUT; the
  // free memory its segments cached does not.
  void KeepStartState(const Recording& r, const std::vector<DeviceId>& ids) {
    uint64_t segments = 0;
    for (const DeviceId d : ids)
      segments += r.facts().device(d).start_summary.value_or(StartSummary{}).segments;
    if (segments == 0) return;
    Note(fmt::format("hbmsim convert: {}: the start state's {} segments are not kept, only their live blocks, as "
                     "allocations at the start (tag=preexisting): it replays as the original does with --start-state place",
                     out_, segments));
  }

  // A disk error says "cannot write OUT: REASON"; an event the format cannot hold names OUT too.
  // The disk's error when OUT failed; otherwise the input holds something OUT's format cannot (a
  // metadata value that is not UTF-8), and the message names the input, not OUT.
  std::string WriteError(const io::OutputFile& out, const Recording& in, const absl::Status& s) const {
    if (!out.status().ok()) return std::string(out.status().message());
    return fmt::format("{}: {}", in.path(), std::string(s.message()));
  }

  std::string in_;
  std::string out_;
  std::string format_;
};

const CommandRegistration kConvert(
    "convert", "convert a trace between the text format and the .hbt binary encoding (optionally zstd)",
    []() -> std::unique_ptr<Command> { return std::make_unique<ConvertCommand>(); });

}  // namespace
}  // namespace hbmsim::sim::cli
