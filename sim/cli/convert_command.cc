// `hbmsim convert IN OUT [--format text|binary|binary-zstd]`: reads any trace
// OpenTrace understands (text, .hbt, RMM logs, ...) and writes it as text or
// as the .hbt binary encoding, one event at a time, so a file of any length
// converts in the memory of what is live in it.
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "fmt/format.h"
#include "sim/cli/command.h"
#include "trace/formats/format_table.h"
#include "trace/binary/trace_sink.h"

namespace hbmsim::cli {
namespace {

std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

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
    if (std::optional<std::string> error = Convert()) {
      fmt::print(stderr, "hbmsim convert: {}\n", OneLine(*error));
      return kExitBadInput;
    }
    return kExitOk;
  }

 private:
  std::optional<std::string> Convert() {
    absl::StatusOr<std::unique_ptr<EventReader>> reader = OpenTrace(in_);
    if (!reader.ok()) return std::string(reader.status().message());
    // What a reader skipped is said on stderr too; the header keeps it as `# warning:` lines.
    for (const auto& [key, value] : (*reader)->metadata().entries) {
      if (key == "warning") fmt::print(stderr, "hbmsim convert: warning: {}\n", value);
    }
    std::ofstream out(out_, std::ios::binary | std::ios::trunc);
    if (!out) return fmt::format("cannot write {}", out_);
    absl::StatusOr<std::unique_ptr<TraceSink>> sink =
        MakeTraceSink(out, format_.empty() ? TraceFormatForPath(out_) : format_);
    if (!sink.ok()) return std::string(sink.status().message());
    if (absl::Status s = (*sink)->WriteHeader((*reader)->metadata()); !s.ok()) return WriteError(s);
    Event e;
    while (true) {
      absl::StatusOr<bool> got = (*reader)->Next(e);
      if (!got.ok()) return std::string(got.status().message());
      if (!*got) break;
      if (absl::Status s = (*sink)->Write(e); !s.ok()) {
        return fmt::format("{}: {}", (*reader)->Location(), std::string(s.message()));
      }
    }
    if (absl::Status s = (*sink)->Finish(); !s.ok()) return WriteError(s);
    return std::nullopt;
  }

  std::string WriteError(const absl::Status& s) const {
    return fmt::format("{}: {}", out_, std::string(s.message()));
  }

  std::string in_;
  std::string out_;
  std::string format_;
};

const CommandRegistration kConvert(
    "convert", "convert a trace between the text format and the .hbt binary encoding (optionally zstd)",
    []() -> std::unique_ptr<Command> { return std::make_unique<ConvertCommand>(); });

}  // namespace
}  // namespace hbmsim::cli
