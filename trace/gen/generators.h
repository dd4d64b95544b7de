// Synthetic allocation traces with the structure of real workloads, for
// benchmarks and what-if studies without a recording (`hbmsim gen`).
//
// Every generator is deterministic: the same parameters and seed give the
// same events, byte for byte, on every machine (SplitMix64, no <random>
// distributions, whose output differs between standard libraries). The
// parameters and the seed are recorded in the trace's metadata.
//
// training  one buffer of weights per layer and `optimizer_states` fp32
//           copies, live throughout; per step and micro-batch, activations
//           allocated layer by layer in forward and freed in reverse in
//           backward (with recompute only each layer's input is kept and the
//           rest is rebuilt during backward); weight gradients live from
//           their layer's first backward to the optimizer step; gradient
//           buckets (all-reduce buffers) every layers/buckets layers.
//           marks: step=N, forward, backward, optimizer, step_end.
//           After every step_end the live bytes are exactly
//           WeightsAndOptimizerBytes(); the peak falls inside backward.
// inference requests in groups of `batch`: a prefill KV cache per layer that
//           grows by reallocation every `block_tokens` decoded tokens (the new
//           buffer is allocated before the old is freed), plus per-token
//           temporaries; marks request_group=N.
// churn     log-uniform sizes in [min_bytes, max_bytes] and log-uniform
//           lifetimes in [1, max_lifetime] events, exactly `events` events;
//           the last ones are frees, so an even count ends with nothing live.
#ifndef HBMSIM_TRACE_GEN_GENERATORS_H_
#define HBMSIM_TRACE_GEN_GENERATORS_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "trace/core/event.h"
#include "trace/core/reader.h"

namespace hbmsim::trace::gen {

// Receives each generated event; an error stops the generator and is returned.
using EventSink = std::function<absl::Status(const Event&)>;

struct TrainingParams {
  uint64_t layers = 4;
  uint64_t hidden = 1024;
  uint64_t seq = 512;
  uint64_t batch = 8;
  uint64_t micro_batches = 1;
  bool recompute = false;
  uint64_t optimizer_states = 2;  // Adam: two fp32 moments
  uint64_t grad_buckets = 2;
  uint64_t steps = 2;
  uint64_t seed = 0;  // sizes are exact; the seed jitters workspace sizes only
};

struct InferenceParams {
  uint64_t layers = 4;
  uint64_t hidden = 1024;
  uint64_t prompt = 128;
  uint64_t new_tokens = 256;
  uint64_t block_tokens = 16;
  uint64_t requests = 8;
  uint64_t batch = 4;
  uint64_t seed = 0;  // jitters each request's prompt and output length
};

struct ChurnParams {
  uint64_t events = 1000000;
  uint64_t min_bytes = 256;
  uint64_t max_bytes = uint64_t{16} << 20;
  uint64_t max_lifetime = 2000;
  uint64_t seed = 0;
};

// Bytes of bf16 weights plus fp32 optimizer states: the live level between steps.
uint64_t WeightsAndOptimizerBytes(const TrainingParams& p);

TraceMetadata Metadata(const TrainingParams& p);
TraceMetadata Metadata(const InferenceParams& p);
TraceMetadata Metadata(const ChurnParams& p);

absl::Status GenerateTraining(const TrainingParams& p, const EventSink& sink);
absl::Status GenerateInference(const InferenceParams& p, const EventSink& sink);
absl::Status GenerateChurn(const ChurnParams& p, const EventSink& sink);

// SplitMix64: tiny, fast, and the same sequence everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi].
  uint64_t Uniform(uint64_t lo, uint64_t hi) { return lo + Next() % (hi - lo + 1); }
  // Log-uniform in [lo, hi] (lo >= 1), in integer arithmetic: a uniform
  // power of two, then a uniform value within that octave, clamped.
  uint64_t LogUniform(uint64_t lo, uint64_t hi);

 private:
  uint64_t state_;
};

}  // namespace hbmsim::trace::gen

#endif  // HBMSIM_TRACE_GEN_GENERATORS_H_
