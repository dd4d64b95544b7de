#include "sim/scale/member_stream.h"

#include <span>

#include "absl/container/flat_hash_map.h"
#include "fmt/format.h"

namespace hbmsim::sim::scale {
namespace {

// FNV-1a: a hash whose value does not depend on the build or the run, so
// alignment (and every report made from it) is the same everywhere.
class Fnv {
 public:
  Fnv& Add(std::string_view bytes) {
    for (unsigned char c : bytes) {
      h_ ^= c;
      h_ *= 1099511628211ull;
    }
    h_ ^= 0xff;  // a separator, so ("ab","c") and ("a","bc") differ
    h_ *= 1099511628211ull;
    return *this;
  }
  Fnv& Add(uint64_t v) { return Add(std::string_view(reinterpret_cast<const char*>(&v), sizeof v)); }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 14695981039346656037ull;
};

// The hashes of each frame list of a table (with and without line
// numbers), computed once per list.
class StackHashes {
 public:
  explicit StackHashes(const ContextTable* table) : table_(table) {}
  std::pair<uint64_t, uint64_t> Of(uint32_t list) {
    if (table_ == nullptr || list == 0) return {0, 0};
    if (const auto it = done_.find(list); it != done_.end()) return it->second;
    Fnv strict, loose;
    for (uint32_t id : table_->list(list)) {
      const StackFrame& f = table_->frame(id);
      strict.Add(f.filename).Add(static_cast<uint64_t>(f.line)).Add(f.name);
      loose.Add(f.filename).Add(f.name);
    }
    const std::pair<uint64_t, uint64_t> out{strict.value(), loose.value()};
    done_.emplace(list, out);
    return out;
  }

 private:
  const ContextTable* table_;
  absl::flat_hash_map<uint32_t, std::pair<uint64_t, uint64_t>> done_;  // looked up only
};

struct Reading {
  MemberStream& out;
  StackHashes stacks;
  absl::flat_hash_map<uint64_t, uint32_t> live;             // buffer id -> alloc ordinal (lookup only)
  std::vector<std::pair<uint64_t, uint64_t>> alloc_tokens;  // alloc ordinal -> its call tokens
};

// The call's tokens, strict and loose.
std::pair<uint64_t, uint64_t> CallTokens(const Event& e, const EventContext& c, Reading& r) {
  Fnv strict, loose;
  for (Fnv* h : {&strict, &loose})
    h->Add(static_cast<uint64_t>(e.stream.value())).Add(uint64_t{e.tag == kStartStateTag});
  const auto [stack, loose_stack] = r.stacks.Of(c.frames);
  if (stack != 0) {
    strict.Add(stack);
    loose.Add(loose_stack);
  } else {
    // Without stacks a call is its tag and, when the recording gives one, its
    // tensor's element type and rank: what stays when the size parameter
    // changes the dimensions (a profile's or a text trace's `shape=`).
    const std::string shape =
        e.shape ? fmt::format("{}/{}", DTypeName(e.shape->dtype), e.shape->rank()) : std::string();
    strict.Add(e.tag).Add(shape);
    loose.Add(e.tag).Add(shape);
  }
  return {strict.value(), loose.value()};
}

void SetTokens(StreamStep& step, uint64_t kind, std::pair<uint64_t, uint64_t> call) {
  step.token = Fnv().Add(kind).Add(call.first).value();
  step.loose_token = Fnv().Add(kind).Add(call.second).value();
}

void AddStep(const Event& e, const EventContext& c, Reading& r) {
  StreamStep step{e.kind, kNoAlloc, 0, 0};
  if (e.kind == EventKind::kAlloc) {
    step.alloc = static_cast<uint32_t>(r.out.alloc_bytes.size());
    const std::pair<uint64_t, uint64_t> call = CallTokens(e, c, r);
    SetTokens(step, 0, call);
    r.alloc_tokens.push_back(call);
    r.out.alloc_steps.push_back(static_cast<uint32_t>(r.out.steps.size()));
    r.out.alloc_bytes.push_back(e.bytes.value());
    if (e.tag == kStartStateTag) ++r.out.start_allocs;
    if (e.tag == kStartStateTag && r.out.start_steps == r.out.steps.size()) ++r.out.start_steps;
    r.live[e.id] = step.alloc;
  } else if (IsBufferEvent(e.kind)) {
    const auto it = r.live.find(e.id);
    step.alloc = it == r.live.end() ? kNoAlloc : it->second;
    SetTokens(step, static_cast<uint64_t>(e.kind) + 1,
              step.alloc == kNoAlloc ? std::pair<uint64_t, uint64_t>{0, 0} : r.alloc_tokens[step.alloc]);
    if (e.kind != EventKind::kFreeRequested && it != r.live.end()) r.live.erase(it);
    // A start-state block already pending free: its free_requested follows the blocks.
    const bool of_start = step.alloc != kNoAlloc && step.alloc < r.out.start_allocs;
    if (of_start && e.kind == EventKind::kFreeRequested && r.out.start_steps == r.out.steps.size()) {
      ++r.out.start_steps;
    }
  } else {
    step.token = step.loose_token = Fnv().Add(static_cast<uint64_t>(e.kind) + 1).Add(e.label).value();
  }
  r.out.steps.push_back(step);
}

// How many times the shortest run of steps that tiles `tokens` exactly
// repeats (1 when none shorter than the whole does): a candidate period p
// divides the length, and every token equals the one p before it.
uint64_t ExactRepeats(std::span<const uint64_t> tokens) {
  const size_t n = tokens.size();
  for (size_t p = 1; p <= n / 2; ++p) {
    if (n % p != 0) continue;
    size_t i = p;
    while (i < n && tokens[i] == tokens[i - p]) ++i;
    if (i == n) return n / p;
  }
  return 1;
}

}  // namespace

std::vector<uint64_t> StepTokens(const MemberStream& m, bool loose) {
  std::vector<uint64_t> out;
  out.reserve(m.steps.size());
  for (const StreamStep& s : m.steps) out.push_back(loose ? s.loose_token : s.token);
  return out;
}

absl::StatusOr<MemberStream> ReadMemberStream(std::shared_ptr<const Scenario> scenario, uint64_t value,
                                              std::string name) {
  MemberStream out;
  out.value = value;
  out.name = std::move(name);
  out.scenario = scenario;
  absl::StatusOr<std::unique_ptr<EventReader>> reader = scenario->Events();
  if (!reader.ok()) return reader.status();
  Reading r{out, StackHashes((*reader)->context_table()), {}, {}};
  Event e;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->Next(e);
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (scenario->device && e.device != *scenario->device) continue;
    const EventContext c = (*reader)->context();
    if (e.kind == EventKind::kMark && c.allocator_action) {
      ++out.allocator_marks_dropped;
      continue;
    }
    AddStep(e, c, r);
    out.events.push_back(OwnedEvent::Own(e));
    out.contexts.push_back(c);
  }
  for (OwnedEvent& o : out.events) o.get();  // the vector's moves left the views behind
  const std::vector<uint64_t> tokens = StepTokens(out, false);
  out.iterations = ExactRepeats(std::span<const uint64_t>(tokens).subspan(out.start_steps));
  return out;
}

}  // namespace hbmsim::sim::scale
