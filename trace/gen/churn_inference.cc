// The churn and inference generators (see generators.h for the models).
#include <algorithm>
#include <bit>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "trace/gen/emitter.h"
#include "trace/gen/generators.h"

namespace hbmsim::trace::gen {

uint64_t Rng::LogUniform(uint64_t lo, uint64_t hi) {
  const int lo_octave = std::bit_width(lo) - 1;
  const int hi_octave = std::bit_width(hi) - 1;
  const int octave = static_cast<int>(Uniform(lo_octave, hi_octave));
  const uint64_t base = uint64_t{1} << octave;
  const uint64_t v = base + (octave == 63 ? Next() >> 1 : Next() % base);
  return std::clamp(v, lo, hi);
}

TraceMetadata Metadata(const ChurnParams& p) {
  TraceMetadata m;
  m.has_version_header = true;
  m.entries = {
      {"source", "hbmsim gen churn"},
      {"seed", fmt::format("{}", p.seed)},
      {"params", fmt::format("events={} min_bytes={} max_bytes={} max_lifetime={}", p.events, p.min_bytes,
                             p.max_bytes, p.max_lifetime)},
  };
  return m;
}

absl::Status GenerateChurn(const ChurnParams& p, const EventSink& sink) {
  if (p.min_bytes == 0 || p.min_bytes > p.max_bytes || p.max_lifetime == 0) {
    return absl::InvalidArgumentError("churn needs 1 <= min_bytes <= max_bytes and max_lifetime >= 1");
  }
  Emitter out(sink);
  Rng rng(p.seed);
  using Death = std::pair<uint64_t, uint64_t>;  // (event at which it dies, id)
  std::priority_queue<Death, std::vector<Death>, std::greater<>> live;
  while (out.events() < p.events && out.status().ok()) {
    const uint64_t left = p.events - out.events();
    // Free when a lifetime is up, or when the events left are needed for frees.
    if (!live.empty() && (live.top().first <= out.events() || left <= live.size())) {
      out.Free(live.top().second);
      live.pop();
      continue;
    }
    const uint64_t bytes = rng.LogUniform(p.min_bytes, p.max_bytes);
    const uint64_t lifetime = rng.LogUniform(1, p.max_lifetime);
    const uint64_t id = out.Alloc(bytes, "");
    live.emplace(out.events() + lifetime, id);
  }
  return out.status();
}

TraceMetadata Metadata(const InferenceParams& p) {
  TraceMetadata m;
  m.has_version_header = true;
  m.entries = {
      {"source", "hbmsim gen inference"},
      {"seed", fmt::format("{}", p.seed)},
      {"params",
       fmt::format("layers={} hidden={} prompt={} new_tokens={} block_tokens={} requests={} batch={}",
                   p.layers, p.hidden, p.prompt, p.new_tokens, p.block_tokens, p.requests, p.batch)},
  };
  return m;
}

namespace {

struct Request {
  uint64_t length = 0;  // tokens in the cache
  uint64_t capacity = 0;
  uint64_t remaining = 0;    // tokens still to generate
  std::vector<uint64_t> kv;  // one buffer per layer
};

class InferenceGenerator {
 public:
  InferenceGenerator(const InferenceParams& p, const EventSink& sink) : p_(p), out_(sink), rng_(p.seed) {}

  absl::Status Run() {
    for (uint64_t first = 0, group = 0; first < p_.requests; first += p_.batch, ++group) {
      out_.Mark(fmt::format("request_group={}", group));
      std::vector<Request> active;
      for (uint64_t r = first; r < std::min(p_.requests, first + p_.batch); ++r) active.push_back(Prefill());
      Decode(active);
    }
    return out_.status();
  }

 private:
  // K and V, bf16, per token per layer.
  uint64_t KvBytes(uint64_t tokens) const { return 2 * tokens * p_.hidden * 2; }
  uint64_t RoundUp(uint64_t tokens) const {
    return (tokens + p_.block_tokens - 1) / p_.block_tokens * p_.block_tokens;
  }
  uint64_t Jitter(uint64_t n) { return std::max<uint64_t>(1, n - n / 4 + rng_.Uniform(0, n / 2)); }

  Request Prefill() {
    Request r;
    r.length = Jitter(p_.prompt);
    r.remaining = Jitter(p_.new_tokens);
    r.capacity = RoundUp(r.length + 1);
    for (uint64_t l = 0; l < p_.layers; ++l) r.kv.push_back(out_.Alloc(KvBytes(r.capacity), "kv_cache"));
    out_.Free(out_.Alloc(r.length * p_.hidden * 2 * 4, "workspace"));
    return r;
  }

  // The cache is full: a bigger one is allocated, the old copied and freed.
  void Grow(Request& r) {
    r.capacity += p_.block_tokens;
    for (uint64_t& kv : r.kv) {
      const uint64_t bigger = out_.Alloc(KvBytes(r.capacity), "kv_cache");
      out_.Free(kv);
      kv = bigger;
    }
  }

  void Decode(std::vector<Request>& active) {
    while (!active.empty() && out_.status().ok()) {
      out_.Free(out_.Alloc(active.size() * p_.hidden * 2 * 4, "workspace"));
      for (Request& r : active) {
        if (r.length == r.capacity) Grow(r);
        ++r.length;
        --r.remaining;
      }
      for (auto it = active.begin(); it != active.end();) {
        if (it->remaining > 0) {
          ++it;
          continue;
        }
        for (const uint64_t kv : it->kv) out_.Free(kv);
        it = active.erase(it);
      }
    }
  }

  const InferenceParams& p_;
  Emitter out_;
  Rng rng_;
};

}  // namespace

absl::Status GenerateInference(const InferenceParams& p, const EventSink& sink) {
  if (p.layers == 0 || p.hidden == 0 || p.prompt == 0 || p.new_tokens == 0 || p.block_tokens == 0 ||
      p.batch == 0) {
    return absl::InvalidArgumentError(
        "layers, hidden, prompt, new_tokens, block_tokens and batch must be >= 1");
  }
  return InferenceGenerator(p, sink).Run();
}

}  // namespace hbmsim::trace::gen
