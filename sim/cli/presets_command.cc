// `hbmsim presets [--json OUT]`: the device presets `--bytes-limit` takes
// (sim/config/device_presets.h), each with its bytes, what the figure
// measures and where it is published.
#include <memory>
#include <string>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "sim/cli/command.h"
#include "sim/config/device_presets.h"
#include "sim/layer.h"
#include "trace/io/output_set.h"

namespace hbmsim::sim::cli {
namespace {

nlohmann::ordered_json PresetsJson() {
  nlohmann::ordered_json presets = nlohmann::ordered_json::array();
  for (const DevicePreset& p : DevicePresets()) {
    presets.push_back({{"name", p.name},
                       {"device", p.device},
                       {"bytes", p.bytes.value()},
                       {"figure", p.figure},
                       {"source", p.source}});
  }
  return {{"presets", std::move(presets)}};
}

class PresetsCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("--json", json_, "write the presets as JSON here");
  }

  int Run() override {
    absl::StatusOr<io::OutputSet> outputs = io::OutputSet::Open({}, {{"--json", json_}});
    if (!outputs.ok()) return Fail(outputs.status());
    if (absl::Status s = io::WriteStdout(DevicePresetsText()); !s.ok()) return Fail(s);
    if (!json_.empty()) {
      if (absl::Status s = outputs->Write("--json", PresetsJson().dump(2) + "\n"); !s.ok()) return Fail(s);
    }
    if (absl::Status s = outputs->CommitAll(); !s.ok()) return Fail(s);
    return kExitOk;
  }

 private:
  static int Fail(const absl::Status& s) {
    PrintError(fmt::format("hbmsim presets: {}", OneLineMessage(std::string(s.message()))));
    return kExitBadInput;
  }

  std::string json_;
};

const CommandRegistration kPresets(
    "presets",
    "the device presets --bytes-limit takes (a100-40gb, h100-80gb, tpu-v5e, ...) and their sources",
    []() -> std::unique_ptr<Command> { return std::make_unique<PresetsCommand>(); });

}  // namespace
}  // namespace hbmsim::sim::cli
