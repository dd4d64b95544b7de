// Random operation programs for property tests and differential fuzzing.
//
// A program is a vector of small Op structs (TCMalloc's fuzz style): easy to
// generate from a seed, to print when a property fails, and to shrink by hand.
// RunProgram drives any Allocator directly (no trace, no engine), checks the
// allocator's invariants after every op, and returns a digest of everything
// observable (every result, the final stats), so "two runs are identical" is a
// string comparison.
#ifndef HBMSIM_TESTS_COMMON_RANDOM_OPS_H_
#define HBMSIM_TESTS_COMMON_RANDOM_OPS_H_

#include <cstdint>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "allocator/core/allocator.h"
#include "fmt/format.h"
#include "sim/all_layers.h"

namespace hbmsim::testing {

enum class OpKind : uint8_t { kAlloc, kFree, kRequestFree, kCompleteFree };

struct Op {
  OpKind kind = OpKind::kAlloc;
  uint64_t id = 0;
  uint64_t bytes = 0;   // kAlloc only
  uint64_t stream = 0;  // kAlloc only
};

struct ProgramShape {
  int num_ops = 2000;
  uint64_t min_bytes = 1;          // sizes are log-uniform in [min_bytes, max_bytes]
  uint64_t max_bytes = 64 << 20;
  double free_probability = 0.45;  // chance that an op frees a live buffer
  double queued_free_fraction = 0.0;  // of frees, the share done as request + complete
  double zero_byte_probability = 0.01;
  int num_streams = 1;
};

inline std::string OpToString(const Op& op) {
  switch (op.kind) {
    case OpKind::kAlloc: return fmt::format("alloc {} {} stream={}", op.id, op.bytes, op.stream);
    case OpKind::kFree: return fmt::format("free {}", op.id);
    case OpKind::kRequestFree: return fmt::format("free_requested {}", op.id);
    case OpKind::kCompleteFree: return fmt::format("free_completed {}", op.id);
  }
  return "?";
}

// A valid program: frees only live ids, completes only requested ones.
inline std::vector<Op> GenerateProgram(uint64_t seed, const ProgramShape& shape) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<Op> ops;
  std::vector<uint64_t> live, pending;
  uint64_t next_id = 1;
  const double lo = std::log2(static_cast<double>(shape.min_bytes));
  const double hi = std::log2(static_cast<double>(shape.max_bytes));
  auto take = [&](std::vector<uint64_t>& from) {
    const size_t i = rng() % from.size();
    const uint64_t id = from[i];
    from[i] = from.back();
    from.pop_back();
    return id;
  };
  while (static_cast<int>(ops.size()) < shape.num_ops) {
    if (!pending.empty() && unit(rng) < 0.5) {
      ops.push_back({OpKind::kCompleteFree, take(pending), 0, 0});
    } else if (!live.empty() && unit(rng) < shape.free_probability) {
      const uint64_t id = take(live);
      if (unit(rng) < shape.queued_free_fraction) {
        ops.push_back({OpKind::kRequestFree, id, 0, 0});
        pending.push_back(id);
      } else {
        ops.push_back({OpKind::kFree, id, 0, 0});
      }
    } else {
      const uint64_t bytes = unit(rng) < shape.zero_byte_probability
                                 ? 0
                                 : static_cast<uint64_t>(std::exp2(lo + (hi - lo) * unit(rng)));
      const uint64_t stream = rng() % static_cast<uint64_t>(shape.num_streams);
      ops.push_back({OpKind::kAlloc, next_id, bytes, stream});
      live.push_back(next_id++);
    }
  }
  return ops;
}

// The request of alloc op `i`.
inline AllocRequest RequestOf(const Op& op, size_t i) {
  AllocRequest req;
  req.id = BufferId(op.id);
  req.bytes = Bytes(op.bytes);
  req.stream = StreamId(op.stream);
  req.event = EventIndex(i);
  return req;
}

// Applies a free, free_requested or free_completed of a buffer whose handle
// `handles` holds (one whose alloc failed is skipped, as the engine does).
inline void ApplyRelease(Allocator& a, const Op& op, std::map<uint64_t, Handle>& handles) {
  auto it = handles.find(op.id);
  if (it == handles.end()) return;
  if (op.kind == OpKind::kFree) a.Free(it->second);
  if (op.kind == OpKind::kRequestFree) a.RequestFree(it->second);
  if (op.kind == OpKind::kCompleteFree) a.CompleteFree(it->second);
  if (op.kind != OpKind::kRequestFree) handles.erase(it);
}

struct RunOutcome {
  absl::Status invariants;  // the first broken invariant, with the op that broke it
  std::string digest;       // every result and the final stats, one line each
  int failures = 0;
};

// Replays `ops`; frees of failed allocations are skipped (as the engine does).
inline RunOutcome RunProgram(Allocator& a, const std::vector<Op>& ops, bool paranoid = true) {
  RunOutcome out;
  std::map<uint64_t, Handle> handles;  // ordered: the digest must not depend on hashing
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.kind == OpKind::kAlloc) {
      const AllocResult r = a.Allocate(RequestOf(op, i));
      out.digest += fmt::format("{} {} {} {} {}\n", i, AllocStatusName(r.status),
                                r.has_offset ? r.offset.value() : ~uint64_t{0}, r.size.value(),
                                r.rounded.value());
      if (r.ok()) {
        handles[op.id] = r.handle;
      } else {
        ++out.failures;
      }
    } else {
      ApplyRelease(a, op, handles);
    }
    if (paranoid) {
      absl::Status s = a.CheckInvariants();
      if (!s.ok()) {
        out.invariants = absl::InternalError(
            fmt::format("after op {} ({}): {}", i, OpToString(op), std::string(s.message())));
        return out;
      }
    }
  }
  const AllocatorStats st = a.GetStats();
  out.digest += fmt::format("stats {} {} {} {} {} {} {}\n", st.num_allocs, st.bytes_in_use,
                            st.peak_bytes_in_use, st.largest_alloc_size, st.largest_free_block_bytes,
                            st.pool_bytes.value_or(-1), st.peak_pool_bytes.value_or(-1));
  return out;
}

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_COMMON_RANDOM_OPS_H_
