// `hbmsim diagnose LOG [--json OUT]`: reads a TensorFlow / JAX log holding
// BFC allocator OOM dumps and explains each one: the request, oom or
// fragmentation, the free-chunk histogram and the what-ifs (trace/bfc_dump).
// XLA's "Can't reduce memory use below ..." rematerialization warnings in the
// same log are reported after them (trace/xla/remat_warning.h).
// The OOM texts of JAX, XLA and the TPU runtime in the same log (allocation
// and reservation failures, BufferAssignment OOM debugging, XLA:TPU's
// compile-time report, allocator stats, a BFC header without its listing)
// are reported after them, each with its verdict and figures
// (trace/oom_text).
// A TF/JAX profile (.xplane.pb, memory_profile.json.gz) instead of a log gets
// the profile's own report (sim/report/profile_report.h); --html draws it.
// Exit 0 when the log held at least one dump or warning (they record failures
// that already happened), 2 when it cannot be read or holds neither.
#include <cstdio>
#include <string>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "sim/cli/command.h"
#include "sim/config/policy_registry.h"
#include "sim/layer.h"
#include "sim/report/profile_report.h"
#include "trace/bfc_dump/parser.h"
#include "trace/bfc_dump/render.h"
#include "trace/core/json_text.h"
#include "trace/formats/format_table.h"
#include "trace/io/input_file.h"
#include "trace/io/output_set.h"
#include "trace/oom_text/render.h"
#include "trace/xla/remat_warning.h"
#include "trace/xplane/profile_trace.h"

namespace hbmsim::sim::cli {
namespace {

class DiagnoseCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("LOG", log_, "a log or pasted excerpt with BFC \"ran out of memory\" dumps (TF, JAX, XLA)")
        ->required();
    app.add_option("--json", json_, "also write the report as JSON here");
    app.add_option("--html", html_, "for a TF/JAX profile: also write an HTML page with the curves here");
  }

  int Run() override {
    // --json and --html are checked against LOG and created before it is read (trace/io/output_set.h).
    absl::StatusOr<io::OutputSet> outputs =
        io::OutputSet::Open({{"LOG", log_}}, {{"--json", json_}, {"--html", html_}});
    if (!outputs.ok()) return Fail(std::string(outputs.status().message()));
    // A pipe is read once, into a scratch file both passes read (trace/io/input_file.h).
    absl::StatusOr<io::InputFile> input = io::OpenInputFile(log_);
    if (!input.ok()) return Fail(std::string(input.status().message()));
    input_ = *std::move(input);
    // A profile is a recording of every allocation, not a log of failures: the one exception here.
    if (xplane::IsProfileFile(input_.path())) return RunProfile(*outputs);
    if (!html_.empty()) return Fail(fmt::format("--html {}: only for a TF/JAX profile", html_));
    absl::StatusOr<std::vector<xla::RematWarning>> remat = xla::ReadRematWarningsFile(input_.path());
    if (!remat.ok()) return Fail(std::string(remat.status().message()));
    absl::StatusOr<bfc_dump::BfcLog> log = bfc_dump::ReadBfcLogFile(input_.path());
    absl::StatusOr<std::vector<oom_text::OomText>> texts = oom_text::ReadOomTextFile(input_.path());
    if (!texts.ok()) return Fail(std::string(texts.status().message()));
    // A BFC header is read as a text only when no dump explains it.
    if (log.ok()) std::erase_if(*texts, [](const oom_text::OomText& t) { return t.kind == "bfc-header"; });
    // A dump that cannot be read is bad input, as it always was (unless a remat warning is the report);
    // a log with no dump at all is still worth a report when it holds a remat warning or an OOM text.
    const bool no_dump =
        log.status().message().find(": no BFC allocator dump found (") != std::string_view::npos;
    if (!log.ok() && ((!no_dump && (remat->empty() || absl::IsNotFound(log.status()))) ||
                      (no_dump && remat->empty() && texts->empty()))) {
      return Fail(std::string(log.status().message()) + OtherRecordingHint());
    }
    std::vector<bfc_dump::Diagnosis> diagnoses;
    std::string text;
    if (log.ok()) {
      diagnoses = bfc_dump::DiagnoseAll(*log);
      text = bfc_dump::RenderDiagnoseText(*log, diagnoses);
    }
    if (!remat->empty()) text += (text.empty() ? "" : "\n") + xla::RenderRematText(*remat);
    if (!texts->empty()) text += (text.empty() ? "" : "\n") + oom_text::RenderOomTextsText(log_, *texts);
    if (absl::Status s = io::WriteStdout(input_.Rename(text)); !s.ok()) return Fail(std::string(s.message()));
    if (!json_.empty()) {
      const std::string json = input_.Rename(Json(log.ok() ? &*log : nullptr, diagnoses, *remat, *texts));
      if (absl::Status s = outputs->Write("--json", json); !s.ok()) return Fail(std::string(s.message()));
    }
    if (absl::Status s = outputs->CommitAll(); !s.ok()) return Fail(std::string(s.message()));
    return kExitOk;
  }

 private:
  // The BFC report's JSON with "xla_rematerialization": [{"line", "limit", "after", "before",
  // "over_target"}] and "oom_texts": [{"kind", "line", "verdict", "figures", ...}] added; without
  // BFC dumps, {"source", "dumps": [], ...}.
  std::string Json(const bfc_dump::BfcLog* log, const std::vector<bfc_dump::Diagnosis>& diagnoses,
                   const std::vector<xla::RematWarning>& remat,
                   const std::vector<oom_text::OomText>& texts) const {
    nlohmann::json root = log != nullptr
                              ? nlohmann::json::parse(bfc_dump::RenderDiagnoseJson(*log, diagnoses))
                              : nlohmann::json{{"source", log_}, {"dumps", nlohmann::json::array()}};
    nlohmann::json warnings = nlohmann::json::array();
    for (const xla::RematWarning& w : remat) {
      warnings.push_back({{"line", w.line},
                          {"limit", w.limit},
                          {"after", w.after},
                          {"before", w.before},
                          {"over_target", w.over_target()}});
    }
    root["xla_rematerialization"] = warnings;
    root["oom_texts"] = oom_text::RenderOomTextsJson(texts);
    // A pasted log can hold bytes that are not UTF-8 (a cut multi-byte character): replaced, never fatal.
    return JsonText(root, 2) + "\n";
  }

  // The profile's peak, what held it by tf_op, BFC's fragmentation over time; each
  // output names a piped profile as the user did, never its scratch file.
  int RunProfile(io::OutputSet& outputs) {
    absl::StatusOr<xplane::ProfileTrace> t = xplane::ReadProfileTraceFile(input_.path());
    if (!t.ok()) return Fail(std::string(t.status().message()));
    const std::vector<xplane::AllocatorSummary> s = xplane::SummarizeProfile(*t);
    if (absl::Status st = io::WriteStdout(input_.Rename(RenderProfileText(*t, s))); !st.ok())
      return Fail(std::string(st.message()));
    if (!json_.empty()) {
      if (absl::Status st =
              outputs.Write("--json", input_.Rename(JsonText(RenderProfileJson(*t, s), 2) + "\n"));
          !st.ok()) {
        return Fail(std::string(st.message()));
      }
    }
    if (!html_.empty()) {
      if (absl::Status st = outputs.Write("--html", input_.Rename(RenderProfileHtml(*t, s))); !st.ok()) {
        return Fail(std::string(st.message()));
      }
    }
    if (absl::Status st = outputs.CommitAll(); !st.ok()) return Fail(std::string(st.message()));
    return kExitOk;
  }

  // For a file with no dump that is a recording another command reads (a
  // PyTorch snapshot, a trace): which command explains it. "" for text,
  // the format that takes anything, as a log without a dump is text too.
  std::string OtherRecordingHint() const {
    absl::StatusOr<const TraceFormatRow*> row = DetectTraceFormat(input_.path());
    if (!row.ok() || (*row)->format == TraceFormat::kText) return "";
    // A held state (a JAX device memory profile) has nothing to replay: inspect shows what it holds.
    absl::StatusOr<std::unique_ptr<Recording>> opened = (*row)->open(input_.path());
    if (opened.ok() && (*opened)->facts().held_state != nullptr) {
      return fmt::format("; it is a recording ({}): `hbmsim inspect {}` shows what it holds",
                         TraceFormatName((*row)->format), log_);
    }
    const PolicySpec* made = BuiltinPolicies().MadeFormat((*row)->format);
    return fmt::format("; it is a recording ({}): `hbmsim replay {}{}` replays it",
                       TraceFormatName((*row)->format), log_, made != nullptr ? "" : " --allocator NAME");
  }

  int Fail(const std::string& message) const {
    PrintError(fmt::format("hbmsim diagnose: {}", OneLineMessage(input_.Rename(message))));
    return kExitBadInput;
  }

  std::string log_;
  std::string json_;
  std::string html_;
  io::InputFile input_;  // LOG, spooled once when it is a pipe
};

const CommandRegistration kDiagnose("diagnose",
                                    "explain BFC allocator OOM dumps, XLA remat warnings and the OOM texts of "
                                    "JAX, XLA and the TPU runtime from a log: oom or fragmentation, and what "
                                    "would fit",
                                    []() -> std::unique_ptr<Command> {
                                      return std::make_unique<DiagnoseCommand>();
                                    });

}  // namespace
}  // namespace hbmsim::sim::cli
