// The generators are deterministic, valid, and shaped like the workloads
// they imitate (numbers checked, not eyeballed).
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "trace/core/validator.h"
#include "trace/gen/generators.h"
#include "trace/text/text_writer.h"

namespace hbmsim {
namespace {

// Runs a generator, validating every event and following the live bytes.
struct GenRun {
  std::vector<std::string> marks;
  uint64_t events = 0;
  uint64_t live = 0;
  uint64_t peak = 0;
  std::string phase_at_peak;
  std::vector<uint64_t> live_at_step_end;
  uint64_t min_alloc = ~uint64_t{0};
  uint64_t max_alloc = 0;
};

template <typename Generate>
GenRun Follow(Generate generate) {
  GenRun run;
  TraceValidator validator;
  absl::flat_hash_map<uint64_t, uint64_t> sizes;
  std::string phase;
  absl::Status s = generate([&](const Event& e) -> absl::Status {
    if (absl::Status v = validator.Check(e); !v.ok()) return v;
    ++run.events;
    if (e.kind == EventKind::kAlloc) {
      sizes[e.id] = e.bytes.value();
      run.live += e.bytes.value();
      run.min_alloc = std::min(run.min_alloc, e.bytes.value());
      run.max_alloc = std::max(run.max_alloc, e.bytes.value());
      if (run.live > run.peak) {
        run.peak = run.live;
        run.phase_at_peak = phase;
      }
    } else if (e.kind == EventKind::kFree) {
      run.live -= sizes[e.id];
      sizes.erase(e.id);
    } else if (e.kind == EventKind::kMark) {
      phase = std::string(e.label);
      run.marks.push_back(phase);
      if (phase == "step_end") run.live_at_step_end.push_back(run.live);
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
  return run;
}

template <typename Params>
std::string AsText(const Params& p, absl::Status (*generate)(const Params&, const gen::EventSink&)) {
  std::ostringstream out;
  TextTraceWriter writer(out);
  EXPECT_TRUE(writer.WriteHeader(gen::Metadata(p)).ok());
  EXPECT_TRUE(generate(p, [&](const Event& e) { return writer.Write(e); }).ok());
  EXPECT_TRUE(writer.Flush().ok());
  return out.str();
}

gen::TrainingParams SmallTraining() {
  gen::TrainingParams p;
  p.layers = 2;
  p.hidden = 64;
  p.seq = 16;
  p.batch = 2;
  p.steps = 3;
  p.seed = 7;
  return p;
}

TEST(Training, LiveBytesReturnToWeightsAndOptimizerAfterEveryStep) {
  const gen::TrainingParams p = SmallTraining();
  // 2 layers x 12 x 64^2 parameters x (2 bytes bf16 + 2 x 4 bytes fp32)
  EXPECT_EQ(gen::WeightsAndOptimizerBytes(p), 983040u);
  const GenRun run = Follow([&](const gen::EventSink& s) { return gen::GenerateTraining(p, s); });
  EXPECT_EQ(run.live_at_step_end, (std::vector<uint64_t>{983040, 983040, 983040}));
  EXPECT_EQ(run.phase_at_peak, "backward");
  // The peak comes at the end of backward: both layers' weight gradients
  // (12 x 64^2 x 2 bytes = 96 KiB each) and the two all-reduce buckets that
  // hold them, on top of weights and optimizer states.
  EXPECT_EQ(run.peak, 983040u + 4 * 98304);
  EXPECT_EQ(run.marks.front(), "step=0");
}

TEST(Training, RecomputeLowersThePeakAndKeepsTheShape) {
  gen::TrainingParams p = SmallTraining();
  p.seq = 256;  // activations (scores grow with seq^2) dominate the gradients
  p.batch = 8;
  const GenRun full = Follow([&](const gen::EventSink& s) { return gen::GenerateTraining(p, s); });
  p.recompute = true;
  const GenRun recompute = Follow([&](const gen::EventSink& s) { return gen::GenerateTraining(p, s); });
  EXPECT_LT(recompute.peak, full.peak);
  EXPECT_EQ(recompute.live_at_step_end, (std::vector<uint64_t>{983040, 983040, 983040}));
}

TEST(Training, MicroBatchesRepeatForwardAndBackward) {
  gen::TrainingParams p = SmallTraining();
  p.micro_batches = 2;
  p.steps = 1;
  const GenRun run = Follow([&](const gen::EventSink& s) { return gen::GenerateTraining(p, s); });
  EXPECT_EQ(run.marks, (std::vector<std::string>{"step=0", "forward", "backward", "forward", "backward",
                                                 "optimizer", "step_end"}));
  EXPECT_EQ(run.live_at_step_end, (std::vector<uint64_t>{983040}));
}

TEST(Generators, SameSeedSameBytesOtherSeedOtherBytes) {
  EXPECT_EQ(AsText(SmallTraining(), gen::GenerateTraining), AsText(SmallTraining(), gen::GenerateTraining));
  gen::ChurnParams c;
  c.events = 5000;
  c.seed = 1;
  const std::string first = AsText(c, gen::GenerateChurn);
  EXPECT_EQ(first, AsText(c, gen::GenerateChurn));
  c.seed = 2;
  EXPECT_NE(first, AsText(c, gen::GenerateChurn));
  EXPECT_NE(first.find("# seed: 1\n"), std::string::npos);
  gen::InferenceParams i;
  i.seed = 3;
  EXPECT_EQ(AsText(i, gen::GenerateInference), AsText(i, gen::GenerateInference));
}

TEST(Churn, ExactlyTheEventsAskedForAndEverythingFreed) {
  gen::ChurnParams c;
  c.events = 100000;
  c.min_bytes = 512;
  c.max_bytes = 1 << 20;
  c.max_lifetime = 100;
  c.seed = 9;
  const GenRun run = Follow([&](const gen::EventSink& s) { return gen::GenerateChurn(c, s); });
  EXPECT_EQ(run.events, 100000u);
  EXPECT_EQ(run.live, 0u);
  EXPECT_GE(run.min_alloc, 512u);
  EXPECT_LE(run.max_alloc, uint64_t{1} << 20);
  EXPECT_LT(run.min_alloc, 1024u);              // log-uniform: the lowest octave is hit
  EXPECT_GE(run.max_alloc, uint64_t{1} << 19);  // and the highest
}

TEST(Inference, KvCachesGrowAndAreAllFreed) {
  gen::InferenceParams i;
  i.layers = 2;
  i.hidden = 64;
  i.prompt = 8;
  i.new_tokens = 40;
  i.block_tokens = 16;
  i.requests = 3;
  i.batch = 2;
  const GenRun run = Follow([&](const gen::EventSink& s) { return gen::GenerateInference(i, s); });
  EXPECT_EQ(run.marks, (std::vector<std::string>{"request_group=0", "request_group=1"}));
  EXPECT_EQ(run.live, 0u);
  // The smallest request: one request's decode workspace, 64 x 2 x 4 bytes.
  EXPECT_EQ(run.min_alloc, 512u);
}

}  // namespace
}  // namespace hbmsim
