// `hbmsim convert IN OUT [--format text|binary|binary-zstd]`: reads any trace
// OpenTrace understands (text, .hbt, RMM logs, ...) and writes it as text or
// as the .hbt binary encoding, one event at a time, so a file of any length
// converts in the memory of what is live in it.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "fmt/format.h"
#include "sim/cli/command.h"
#include "trace/formats/format_table.h"
#include "trace/binary/trace_sink.h"
#include "trace/io/output_file.h"
#include "trace/io/path_identity.h"

namespace hbmsim::cli {
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
    if (absl::Status s = io::CheckOutputsAreNotInputs({{"IN", in_}}, {{"OUT", out_}}); !s.ok()) {
      return std::string(s.message());
    }
    absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::Create(out_);
    if (!out.ok()) return std::string(out.status().message());
    absl::StatusOr<std::unique_ptr<EventReader>> reader = OpenTrace(in_);
    if (!reader.ok()) return std::string(reader.status().message());
    // What a reader skipped is said on stderr too; the header keeps it as `# warning:` lines.
    for (const auto& [key, value] : (*reader)->metadata().entries) {
      if (key == "warning") Note(fmt::format("hbmsim convert: warning: {}", value));
    }
    absl::StatusOr<std::unique_ptr<TraceSink>> sink =
        MakeTraceSink((*out)->stream(), format_.empty() ? TraceFormatForPath(out_) : format_);
    if (!sink.ok()) return std::string(sink.status().message());
    if (absl::Status s = (*sink)->WriteHeader((*reader)->metadata()); !s.ok()) return WriteError(**out, s);
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
    if (absl::Status s = (*sink)->Finish(); !s.ok()) return WriteError(**out, s);
    if (absl::Status s = (*out)->Commit(); !s.ok()) return std::string(s.message());
    return std::nullopt;
  }

  // A disk error says "cannot write OUT: REASON"; an event the format cannot hold names OUT too.
  std::string WriteError(const io::OutputFile& out, const absl::Status& s) const {
    if (!out.status().ok()) return std::string(out.status().message());
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
