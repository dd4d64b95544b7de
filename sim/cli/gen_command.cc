// `hbmsim gen KIND [options] --seed N -o OUT`: writes a deterministic
// synthetic trace (trace/gen/generators.h) as text or .hbt, by OUT's
// extension or --format. The seed and every parameter go into the header.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "fmt/format.h"
#include "sim/cli/command.h"
#include "sim/layer.h"
#include "trace/binary/trace_sink.h"
#include "trace/gen/generators.h"
#include "trace/io/output_file.h"

namespace hbmsim::sim::cli {
namespace {

class GenCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("KIND", kind_, "training, inference or churn")
        ->required()
        ->check(CLI::IsMember({"training", "inference", "churn"}));
    app.add_option("-o,--output", out_, "the trace to write (.trace text, .hbt binary, .hbt.zst compressed)")
        ->required();
    app.add_option("--seed", seed_, "the random seed (recorded in the header)")->required()->check(UnsignedNumber());
    app.add_option("--format", format_, "text, binary or binary-zstd (default: from the output's extension)")
        ->check(CLI::IsMember({"text", "binary", "binary-zstd"}));
    app.add_option("--layers", layers_, "training, inference: transformer layers")->check(UnsignedNumber());
    app.add_option("--hidden", hidden_, "training, inference: hidden size")->check(UnsignedNumber());
    app.add_option("--seq", training_.seq, "training: sequence length")->check(UnsignedNumber());
    app.add_option("--batch", batch_, "training: batch size; inference: concurrent requests")->check(UnsignedNumber());
    app.add_option("--micro-batches", training_.micro_batches, "training: micro-batches per step")->check(UnsignedNumber());
    app.add_option("--recompute", recompute_, "training: activation recompute")
        ->check(CLI::IsMember({"on", "off"}));
    app.add_option("--optimizer-states", training_.optimizer_states, "training: fp32 states per weight")->check(UnsignedNumber());
    app.add_option("--grad-buckets", training_.grad_buckets, "training: all-reduce buckets per step")->check(UnsignedNumber());
    app.add_option("--steps", training_.steps, "training: steps")->check(UnsignedNumber());
    app.add_option("--prompt", inference_.prompt, "inference: prompt tokens (jittered +-25%)")->check(UnsignedNumber());
    app.add_option("--new-tokens", inference_.new_tokens, "inference: generated tokens (jittered +-25%)")->check(UnsignedNumber());
    app.add_option("--block-tokens", inference_.block_tokens, "inference: KV cache growth step")->check(UnsignedNumber());
    app.add_option("--requests", inference_.requests, "inference: requests")->check(UnsignedNumber());
    app.add_option("--events", churn_.events, "churn: events")->check(UnsignedNumber());
    app.add_option("--min-bytes", churn_.min_bytes, "churn: smallest size")->check(UnsignedNumber());
    app.add_option("--max-bytes", churn_.max_bytes, "churn: largest size")->check(UnsignedNumber());
    app.add_option("--max-lifetime", churn_.max_lifetime, "churn: longest lifetime, in events")->check(UnsignedNumber());
  }

  int Run() override {
    if (std::optional<std::string> error = Generate()) {
      PrintError(fmt::format("hbmsim gen: {}", OneLineMessage(*error)));
      return kExitBadInput;
    }
    return kExitOk;
  }

 private:
  void ApplyShared() {
    training_.seed = inference_.seed = churn_.seed = seed_;
    if (layers_) training_.layers = inference_.layers = *layers_;
    if (hidden_) training_.hidden = inference_.hidden = *hidden_;
    if (batch_) training_.batch = inference_.batch = *batch_;
    training_.recompute = recompute_ == "on";
  }

  std::optional<std::string> Generate() {
    ApplyShared();
    // Created before the work: an unwritable path costs nothing; the trace appears only complete.
    absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::Create(out_);
    if (!out.ok()) return std::string(out.status().message());
    absl::StatusOr<std::unique_ptr<TraceSink>> sink =
        MakeTraceSink((*out)->stream(), format_.empty() ? TraceFormatForPath(out_) : format_);
    if (!sink.ok()) return std::string(sink.status().message());
    const TraceMetadata metadata = kind_ == "training"    ? gen::Metadata(training_)
                                   : kind_ == "inference" ? gen::Metadata(inference_)
                                                          : gen::Metadata(churn_);
    if (absl::Status s = (*sink)->WriteHeader(metadata); !s.ok()) return WriteError(**out, s);
    const gen::EventSink write = [&](const Event& e) { return (*sink)->Write(e); };
    absl::Status s = kind_ == "training"    ? gen::GenerateTraining(training_, write)
                     : kind_ == "inference" ? gen::GenerateInference(inference_, write)
                                            : gen::GenerateChurn(churn_, write);
    if (!s.ok() && !(*out)->status().ok()) return std::string((*out)->status().message());
    if (!s.ok()) return fmt::format("{}: {}", kind_, std::string(s.message()));
    if (absl::Status f = (*sink)->Finish(); !f.ok()) return WriteError(**out, f);
    if (absl::Status c = (*out)->Commit(); !c.ok()) return std::string(c.message());
    return std::nullopt;
  }

  // A disk error says "cannot write OUT: REASON"; anything else names OUT.
  std::string WriteError(const io::OutputFile& out, const absl::Status& s) const {
    if (!out.status().ok()) return std::string(out.status().message());
    return fmt::format("{}: {}", out_, std::string(s.message()));
  }

  std::string kind_;
  std::string out_;
  std::string format_;
  uint64_t seed_ = 0;
  std::optional<uint64_t> layers_, hidden_, batch_;
  std::string recompute_ = "off";
  gen::TrainingParams training_;
  gen::InferenceParams inference_;
  gen::ChurnParams churn_;
};

const CommandRegistration kGen(
    "gen", "write a deterministic synthetic trace: training step, inference with a KV cache, or churn",
    []() -> std::unique_ptr<Command> { return std::make_unique<GenCommand>(); });

}  // namespace
}  // namespace hbmsim::sim::cli
