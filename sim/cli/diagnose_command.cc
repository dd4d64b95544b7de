// `hbmsim diagnose LOG [--json OUT]`: reads a TensorFlow / JAX log holding
// BFC allocator OOM dumps and explains each one: the request, oom or
// fragmentation, the free-chunk histogram and the what-ifs (trace/bfc_dump).
// Exit 0 when the log held at least one dump (the dumps themselves record
// failures that already happened), 2 when it cannot be read or holds none.
#include <cstdio>
#include <fstream>
#include <string>

#include "fmt/format.h"
#include "sim/cli/command.h"
#include "trace/bfc_dump/parser.h"
#include "trace/bfc_dump/render.h"

namespace hbmsim::cli {
namespace {

class DiagnoseCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("LOG", log_, "a log or pasted excerpt with BFC \"ran out of memory\" dumps (TF, JAX, XLA)")
        ->required();
    app.add_option("--json", json_, "also write the report as JSON here");
  }

  int Run() override {
    absl::StatusOr<bfc_dump::BfcLog> log = bfc_dump::ReadBfcLogFile(log_);
    if (!log.ok()) return Fail(std::string(log.status().message()));
    const std::vector<bfc_dump::Diagnosis> diagnoses = bfc_dump::DiagnoseAll(*log);
    const std::string text = bfc_dump::RenderDiagnoseText(*log, diagnoses);
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (!json_.empty()) {
      std::ofstream out(json_, std::ios::binary);
      out << bfc_dump::RenderDiagnoseJson(*log, diagnoses);
      if (!out.flush()) return Fail(fmt::format("{}: cannot write", json_));
    }
    return kExitOk;
  }

 private:
  static int Fail(const std::string& message) {
    fmt::print(stderr, "hbmsim diagnose: {}\n", message);
    return kExitBadInput;
  }

  std::string log_;
  std::string json_;
};

const CommandRegistration kDiagnose(
    "diagnose", "explain BFC allocator OOM dumps from a TF/JAX log: oom or fragmentation, and what would fit",
    []() -> std::unique_ptr<Command> { return std::make_unique<DiagnoseCommand>(); });

}  // namespace
}  // namespace hbmsim::cli
