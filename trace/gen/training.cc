// The training-step generator (see generators.h for the model).
#include <string>
#include <vector>

#include "fmt/format.h"
#include "trace/gen/emitter.h"
#include "trace/gen/generators.h"

namespace hbmsim::trace::gen {
namespace {

constexpr uint64_t kBf16 = 2;
constexpr uint64_t kFp32 = 4;

// Attention (q, k, v, o) and a 4x MLP: 12 h^2 parameters per layer.
uint64_t LayerParams(const TrainingParams& p) { return 12 * p.hidden * p.hidden; }

struct LayerActivations {
  uint64_t input = 0;                  // kept even under recompute (the checkpoint)
  std::vector<uint64_t> recomputable;  // qkv, scores, attn_out, mlp_up
};

class TrainingGenerator {
 public:
  TrainingGenerator(const TrainingParams& p, const EventSink& sink)
      : p_(p), out_(sink), rng_(p.seed), micro_(std::max<uint64_t>(1, p.batch / p.micro_batches)) {}

  absl::Status Run() {
    for (uint64_t l = 0; l < p_.layers; ++l) {
      out_.Alloc(LayerParams(p_) * kBf16, "weights");
      for (uint64_t s = 0; s < p_.optimizer_states; ++s) out_.Alloc(LayerParams(p_) * kFp32, "optimizer");
    }
    for (uint64_t step = 0; step < p_.steps; ++step) Step(step);
    return out_.status();
  }

 private:
  uint64_t Token() const { return micro_ * p_.seq * p_.hidden * kBf16; }
  uint64_t Heads() const { return std::max<uint64_t>(1, p_.hidden / 128); }

  std::vector<uint64_t> AllocRecomputable() {
    return {out_.Alloc(3 * Token(), "activation"),
            out_.Alloc(micro_ * Heads() * p_.seq * p_.seq * kBf16, "activation"),
            out_.Alloc(Token(), "activation"), out_.Alloc(4 * Token(), "activation")};
  }
  void FreeReverse(const std::vector<uint64_t>& ids) {
    for (auto it = ids.rbegin(); it != ids.rend(); ++it) out_.Free(*it);
  }

  void Forward() {
    out_.Mark("forward");
    layers_.assign(p_.layers, {});
    for (LayerActivations& layer : layers_) {
      layer.input = out_.Alloc(Token(), "activation");
      layer.recomputable = AllocRecomputable();
      out_.Free(out_.Alloc(Token() / 2 * rng_.Uniform(1, 4), "workspace"));
      if (p_.recompute) {
        FreeReverse(layer.recomputable);
        layer.recomputable.clear();
      }
    }
  }

  void Backward(bool first_micro, bool last_micro) {
    out_.Mark("backward");
    const uint64_t per_bucket = std::max<uint64_t>(1, p_.layers / std::max<uint64_t>(1, p_.grad_buckets));
    std::vector<uint64_t> buckets;
    for (uint64_t i = 0; i < p_.layers; ++i) {
      LayerActivations& layer = layers_[p_.layers - 1 - i];
      if (p_.recompute) layer.recomputable = AllocRecomputable();
      if (first_micro) gradients_.push_back(out_.Alloc(LayerParams(p_) * kBf16, "gradient"));
      const uint64_t grad_input = out_.Alloc(Token(), "activation_grad");
      FreeReverse(layer.recomputable);
      out_.Free(layer.input);
      out_.Free(grad_input);
      if (last_micro && ((i + 1) % per_bucket == 0 || i + 1 == p_.layers)) {
        buckets.push_back(out_.Alloc(per_bucket * LayerParams(p_) * kBf16, "grad_bucket"));
      }
    }
    for (const uint64_t b : buckets) out_.Free(b);  // the all-reduce completed
  }

  void Step(uint64_t step) {
    out_.Mark(fmt::format("step={}", step));
    for (uint64_t m = 0; m < p_.micro_batches; ++m) {
      Forward();
      Backward(m == 0, m + 1 == p_.micro_batches);
    }
    out_.Mark("optimizer");
    for (uint64_t l = 0; l < p_.layers; ++l) out_.Free(out_.Alloc(LayerParams(p_) * kFp32, "workspace"));
    for (const uint64_t g : gradients_) out_.Free(g);
    gradients_.clear();
    out_.Mark("step_end");
  }

  const TrainingParams& p_;
  Emitter out_;
  Rng rng_;
  uint64_t micro_;
  std::vector<LayerActivations> layers_;
  std::vector<uint64_t> gradients_;
};

}  // namespace

uint64_t WeightsAndOptimizerBytes(const TrainingParams& p) {
  return p.layers * LayerParams(p) * (kBf16 + p.optimizer_states * kFp32);
}

TraceMetadata Metadata(const TrainingParams& p) {
  TraceMetadata m;
  m.has_version_header = true;
  m.entries = {
      {"source", "hbmsim gen training"},
      {"seed", fmt::format("{}", p.seed)},
      {"params", fmt::format("layers={} hidden={} seq={} batch={} micro_batches={} recompute={} "
                             "optimizer_states={} grad_buckets={} steps={}",
                             p.layers, p.hidden, p.seq, p.batch, p.micro_batches, p.recompute ? "on" : "off",
                             p.optimizer_states, p.grad_buckets, p.steps)},
  };
  return m;
}

absl::Status GenerateTraining(const TrainingParams& p, const EventSink& sink) {
  if (p.layers == 0 || p.hidden == 0 || p.seq == 0 || p.batch == 0 || p.micro_batches == 0) {
    return absl::InvalidArgumentError("layers, hidden, seq, batch and micro_batches must be at least 1");
  }
  return TrainingGenerator(p, sink).Run();
}

}  // namespace hbmsim::trace::gen
