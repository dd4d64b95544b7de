// `hbmsim inspect SNAPSHOT [--probe SIZE]... [--at EVENT|LABEL|oom] [--device N]
// [--bytes-limit SIZE] [--json OUT]`: what a PyTorch allocator held when the
// snapshot was taken (or at a point of its trace), in memory_stats() terms,
// and what it would do with a request of SIZE (sim/inspect/). A recording of
// a held state without addresses (a JAX device memory profile) gets the held
// report instead: by frame and kind per device, headroom, and probes placed
// through its policy (sim/inspect/held_report.h).
// Exit 0, 1 when a probe fails, 2 for bad input.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "sim/cli/command.h"
#include "sim/config/device_presets.h"
#include "sim/inspect/held_report.h"
#include "sim/inspect/inspect_report.h"
#include "sim/layer.h"
#include "trace/core/json_text.h"
#include "trace/core/numbers.h"
#include "trace/formats/format_table.h"
#include "trace/io/output_set.h"

namespace hbmsim::sim::cli {
namespace {

class InspectCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("SNAPSHOT", snapshot_,
                   "a PyTorch memory snapshot pickle (any generation, trace or not) or a JAX device memory "
                   "profile (jax.profiler.save_device_memory_profile)")
        ->required();
    app.add_option(
        "--allocator", allocator_,
        "for a JAX device memory profile: the policy probes place its buffers through (default: tpu "
        "for TPU devices, bfc otherwise); for a trace: the policy that shows its state (default: the one "
        "the recording names)");
    app.add_option(
        "--probe", probes_,
        "a request size (e.g. 512MiB, 1000000000): what the inspected allocator (--allocator) would do with it "
        "now; repeatable");
    app.add_option(
        "--at", at_,
        "replay the device's trace up to this event index, mark label (e.g. segment_alloc) or `oom` "
        "(the first recorded OOM) and inspect that state; default: the snapshot's own segments");
    app.add_option("--device", device_, "the device to inspect (default: the first holding a segment)");
    app.add_option("--bytes-limit", bytes_limit_, "the device capacity for probes (default: unlimited)");
    app.add_option("--stream", stream_, "the stream probes are made on (default 0)");
    app.add_option("--json", json_, "also write the report as JSON here");
  }

  int Run() override {
    // --json is checked against SNAPSHOT and created before any work (trace/io/output_set.h).
    absl::StatusOr<io::OutputSet> outputs = io::OutputSet::Open(
        WithPartnerFiles({{"SNAPSHOT", snapshot_}, {"--allocator", allocator_}}), {{"--json", json_}});
    if (!outputs.ok()) return Fail(std::string(outputs.status().message()));
    inspect::SourceOptions options;
    options.path = snapshot_;
    if (!at_.empty()) options.at = at_;
    if (!device_.empty()) {
      absl::StatusOr<uint64_t> d = ParseU64(device_);
      if (d.ok()) {
        options.device = DeviceId(*d);
      } else {
        device_name_ = device_;  // a device memory profile's label ("cuda:0"); a snapshot refuses it below
        device_error_ = fmt::format("--device {}: {}", device_, std::string(d.status().message()));
      }
    }
    if (!bytes_limit_.empty()) {
      absl::StatusOr<ParsedLimit> b =
          ParseLimitOrPreset(bytes_limit_, "--bytes-limit");  // a size or a preset
      if (!b.ok()) return Fail(std::string(b.status().message()));
      options.bytes_limit = b->bytes;
    }
    std::vector<Bytes> sizes;
    for (const std::string& p : probes_) {
      absl::StatusOr<Bytes> b = ParseBytes(p, /*allow_more_units=*/true);
      if (!b.ok()) return Fail(fmt::format("--probe {}: {}", p, std::string(b.status().message())));
      sizes.push_back(*b);
    }
    absl::StatusOr<uint64_t> stream = ParseU64(stream_);
    if (!stream.ok())
      return Fail(fmt::format("--stream {}: {}", stream_, std::string(stream.status().message())));
    absl::StatusOr<std::unique_ptr<Recording>> opened = OpenRecording(snapshot_);
    if (!opened.ok()) return Fail(std::string(opened.status().message()));
    std::shared_ptr<const Recording> recording(*std::move(opened));
    if (recording->facts().held_state != nullptr)
      return RunHeld(std::move(recording), options, sizes, *outputs);
    options.allocator = allocator_;
    if (!device_error_.empty()) return Fail(device_error_);
    absl::StatusOr<inspect::InspectedState> state = inspect::InspectRecording(std::move(recording), options);
    if (!state.ok()) return Fail(std::string(std::string(state.status().message())));
    const inspect::InspectReport report =
        inspect::MakeInspectReport(snapshot_, *state, sizes, StreamId(*stream));
    const std::string text = inspect::RenderInspectText(report);
    if (absl::Status s = io::WriteStdout(text); !s.ok()) return Fail(std::string(s.message()));
    if (!json_.empty()) {
      if (absl::Status s = outputs->Write("--json", JsonText(inspect::RenderInspectJson(report), 2) + "\n");
          !s.ok()) {
        return Fail(std::string(s.message()));
      }
    }
    if (absl::Status s = outputs->CommitAll(); !s.ok()) return Fail(std::string(s.message()));
    return inspect::AnyProbeFailed(report) ? kExitFailures : kExitOk;
  }

 private:
  int RunHeld(std::shared_ptr<const Recording> recording, const inspect::SourceOptions& source,
              const std::vector<Bytes>& sizes, io::OutputSet& outputs) const {
    // --stream has no meaning here: a profile records no streams, and the probe asks on stream 0.
    if (!at_.empty()) return Fail("--at: a device memory profile is one state, with no trace to replay");
    inspect::HeldOptions options;
    options.device = source.device;
    options.device_name = device_name_;
    options.limit = source.bytes_limit;
    options.probes = sizes;
    options.allocator = allocator_;
    absl::StatusOr<inspect::HeldReport> report = inspect::MakeHeldReport(std::move(recording), options);
    if (!report.ok()) return Fail(std::string(report.status().message()));
    if (absl::Status s = io::WriteStdout(inspect::RenderHeldText(*report)); !s.ok()) {
      return Fail(std::string(s.message()));
    }
    if (!json_.empty()) {
      if (absl::Status s = outputs.Write("--json", inspect::HeldJsonText(*report)); !s.ok()) {
        return Fail(std::string(s.message()));
      }
    }
    if (absl::Status s = outputs.CommitAll(); !s.ok()) return Fail(std::string(s.message()));
    return inspect::AnyHeldProbeFailed(*report) ? kExitFailures : kExitOk;
  }

  static int Fail(const std::string& message) {
    PrintError(fmt::format("hbmsim inspect: {}", OneLineMessage(message)));
    return kExitBadInput;
  }

  std::string snapshot_;
  std::string allocator_;
  std::vector<std::string> probes_;
  std::string at_;
  std::string device_;
  std::string device_name_;   // --device that is not a number
  std::string device_error_;  // why it is not one, for a snapshot
  std::string bytes_limit_;
  std::string stream_ = "0";
  std::string json_;
};

}  // namespace

const CommandRegistration kInspect(
    "inspect",
    "what a PyTorch snapshot's allocator or a JAX device memory profile holds, and what it would do "
    "with a request (--probe)",
    []() -> std::unique_ptr<Command> { return std::make_unique<InspectCommand>(); });

}  // namespace hbmsim::sim::cli
