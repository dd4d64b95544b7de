// Differential fuzzing of every registered policy (sim/config's registry):
// one random operation program (tests/common/random_ops.h) is replayed through
// all of them in lockstep, with CheckInvariants after every event, and the
// properties that must hold across policies are checked at every step:
//
//   verdict      a failure is `oom` iff rounded > free_bytes (allocator.h), and
//                it could not have fit: rounded > largest_free_block (where
//                that block bounds every satisfiable request; see below)
//   sizes        an ok block holds at least the request: size >= rounded >= bytes
//   live set     the in-use blocks of the memory map are exactly the buffers
//                the program holds in that policy, with their requested bytes
//   stats        bytes_in_use == Σ in-use block sizes; peak_bytes_in_use is the
//                running maximum of bytes_in_use
//   lower bound  ideal fits whenever the live requested bytes do, and every
//                policy holds >= the requested bytes within the limit, so no
//                policy's first failure comes after ideal's
//   agreement    until the first failure anywhere, every policy holds the same
//                live set (the same Σ requested bytes)
//   determinism  a fresh instance replaying the same program gives the same
//                digest (RunProgram)
//
// A failure message names the seed, the policy, the op and the program shape,
// so `--gtest_filter` plus the seed reproduces it.
#ifndef HBMSIM_TESTS_HARDENING_DIFFERENTIAL_H_
#define HBMSIM_TESTS_HARDENING_DIFFERENTIAL_H_

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "sim/config/allocator_config.h"
#include "sim/scenario/scenario_run.h"
#include "tests/common/random_ops.h"

namespace hbmsim::testing {

// What the program holds in one policy: id -> (handle, requested bytes).
struct PolicyRun {
  std::string name;
  std::unique_ptr<Allocator> allocator;
  std::map<uint64_t, std::pair<Handle, uint64_t>> live;
  uint64_t live_requested = 0;
  int64_t peak_seen = 0;
  std::optional<size_t> first_failure;  // op index
};

// The in-use blocks of a memory map: id -> requested, and Σ block sizes.
class InUseCollector : public MemoryMapVisitor {
 public:
  void OnRegion(const RegionInfo&) override {}
  void OnBlock(const BlockInfo& b) override {
    if (b.state != BlockState::kInUse) return;
    ids[b.id] = b.requested.value();
    bytes += b.size.value();
  }
  std::map<uint64_t, uint64_t> ids;
  uint64_t bytes = 0;
};

// Writes `ops` as a text trace, one event line per op, so a policy that plans
// from the whole trace (offline, PolicySpec::plan) sees the op index as the
// event index the requests carry.
inline std::string WriteProgramTrace(const std::vector<Op>& ops, const std::string& path) {
  std::string text;
  for (const Op& op : ops) text += OpToString(op) + "\n";
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Every registered policy with its defaults and `limit`.
inline std::vector<PolicyRun> BuildEveryPolicy(Bytes limit, const std::string& trace_path) {
  std::vector<PolicyRun> runs;
  for (const PolicySpec& spec : BuiltinPolicies().policies()) {
    const AllocatorConfig config = DefaultConfig(spec);
    absl::StatusOr<std::unique_ptr<Allocator>> a = absl::InternalError("not built");
    if (spec.plan) {  // planned from the trace's own events, as every command does it
      absl::StatusOr<Scenario> scenario = OpenScenario(trace_path, ScenarioRequest{});
      absl::StatusOr<LimitedFactory> maker =
          scenario.ok() ? MakeAllocatorMaker(*scenario, config) : absl::StatusOr<LimitedFactory>(scenario.status());
      a = maker.ok() ? (*maker)(limit) : absl::StatusOr<std::unique_ptr<Allocator>>(maker.status());
    } else {
      a = BuildAllocator(config, limit);
    }
    if (!a.ok()) {
      ADD_FAILURE() << spec.name << ": " << a.status().message();
      continue;
    }
    runs.push_back({spec.name, *std::move(a), {}, 0, 0, std::nullopt});
  }
  return runs;
}

// Whether every request up to largest_free_block would fit. Not for offline:
// it reports the largest gap, but a buffer may take only its planned place
// (offline_allocator.h). Not for torch: a free 16 MiB block of the large pool
// makes 16 MiB satisfiable while a 700 KiB request needs the small pool or
// another stream's pool (torch_allocator.h).
inline bool LargestFreeBlockIsDownwardClosed(const std::string& policy) {
  return policy != "offline" && policy != "torch";
}

// The first property of `run` that op `i` broke, or "".
inline std::string CheckAlloc(PolicyRun& run, const Op& op, size_t i, const AllocResult& r) {
  if (r.ok()) {
    if (op.bytes > 0 && (r.size < r.rounded || r.rounded < Bytes(op.bytes))) {
      return fmt::format("ok with size {} rounded {} for {} bytes", r.size.value(), r.rounded.value(),
                         op.bytes);
    }
    if (op.bytes > 0) run.live[op.id] = {r.handle, op.bytes};
    run.live_requested += op.bytes;
    return "";
  }
  if (!run.first_failure) run.first_failure = i;
  if (r.status != ClassifyFailure(r.rounded, r.free_bytes)) {
    return fmt::format("verdict {} with rounded {} free {}", AllocStatusName(r.status), r.rounded.value(),
                       r.free_bytes.value());
  }
  if (LargestFreeBlockIsDownwardClosed(run.name) && r.rounded <= r.largest_free_block) {
    return fmt::format("failed although rounded {} <= largest free block {}", r.rounded.value(),
                       r.largest_free_block.value());
  }
  return "";
}

inline std::string CheckState(PolicyRun& run) {
  if (absl::Status s = run.allocator->CheckInvariants(); !s.ok()) return std::string(s.message());
  InUseCollector in_use;
  run.allocator->WalkMemoryMap(in_use);
  std::map<uint64_t, uint64_t> expected;
  for (const auto& [id, held] : run.live) expected[id] = held.second;
  if (in_use.ids != expected) {
    return fmt::format("memory map holds {} buffers, the program {}", in_use.ids.size(), expected.size());
  }
  const AllocatorStats st = run.allocator->GetStats();
  if (static_cast<uint64_t>(st.bytes_in_use) != in_use.bytes) {
    return fmt::format("bytes_in_use {} but in-use blocks hold {}", st.bytes_in_use, in_use.bytes);
  }
  run.peak_seen = std::max(run.peak_seen, st.bytes_in_use);
  if (st.peak_bytes_in_use != run.peak_seen) {
    return fmt::format("peak_bytes_in_use {} but the running maximum is {}", st.peak_bytes_in_use,
                       run.peak_seen);
  }
  return "";
}

inline void ApplyFree(PolicyRun& run, const Op& op) {
  auto it = run.live.find(op.id);
  if (it == run.live.end()) return;  // its alloc failed, or took 0 bytes
  run.allocator->Free(it->second.first);
  run.live_requested -= it->second.second;
  run.live.erase(it);
}

// Replays `ops` through every policy; returns the first broken property.
// `failures`, if given, counts the failed allocations over all policies (so a
// caller can require that a limit actually made policies fail).
inline std::string RunDifferential(uint64_t seed, const std::vector<Op>& ops, Bytes limit,
                                   const std::string& trace_path, int* failures = nullptr) {
  std::vector<PolicyRun> runs = BuildEveryPolicy(limit, WriteProgramTrace(ops, trace_path));
  const auto fail = [&](const PolicyRun& run, size_t i, const std::string& what) {
    return fmt::format("seed {} limit {} policy {} op {} ({}): {}", seed, limit.value(), run.name, i,
                       OpToString(ops[i]), what);
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    for (PolicyRun& run : runs) {
      std::string broken;
      if (op.kind == OpKind::kAlloc) {
        AllocRequest req;
        req.id = BufferId(op.id);
        req.bytes = Bytes(op.bytes);
        req.stream = StreamId(op.stream);
        req.event = EventIndex(i);
        const AllocResult r = run.allocator->Allocate(req);
        if (failures != nullptr && !r.ok()) ++*failures;
        broken = CheckAlloc(run, op, i, r);
      } else {
        ApplyFree(run, op);
      }
      if (broken.empty()) broken = CheckState(run);
      if (!broken.empty()) return fail(run, i, broken);
    }
    const bool none_failed = std::none_of(runs.begin(), runs.end(),
                                          [](const PolicyRun& r) { return r.first_failure.has_value(); });
    for (const PolicyRun& run : runs) {
      if (none_failed && run.live_requested != runs.front().live_requested) {
        return fail(run, i,
                    fmt::format("live requested {} but {} holds {}", run.live_requested, runs.front().name,
                                runs.front().live_requested));
      }
    }
  }
  const auto ideal =
      std::find_if(runs.begin(), runs.end(), [](const PolicyRun& r) { return r.name == "ideal"; });
  if (ideal == runs.end() || !ideal->first_failure) return "";
  for (const PolicyRun& run : runs) {
    if (!run.first_failure || *run.first_failure > *ideal->first_failure) {
      return fail(run, *ideal->first_failure, "ideal failed here but this policy did not fail by then");
    }
  }
  return "";
}

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_HARDENING_DIFFERENTIAL_H_
