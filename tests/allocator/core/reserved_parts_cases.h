// Reserved, explained, worked by hand (allocator/core/reserved_parts.h): one
// case per cause (and per key with a rule of its own) of every policy, each a
// short sequence of allocs and frees whose parts a comment adds up on paper.
//
// A case is data, not a TEST, so that reserved_causes_test.cc can both check
// it (the parts as worked, summing to the policy's ReservedBytes) and hold
// every policy's ReservedCauses() against the cases that exist: a cause a
// policy declares without a case here fails there.
#ifndef HBMSIM_TESTS_CORE_RESERVED_PARTS_CASES_H_
#define HBMSIM_TESTS_CORE_RESERVED_PARTS_CASES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "allocator/core/allocator.h"
#include "allocator/core/reserved_parts.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"

namespace hbmsim::testing {

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * 1024;

// An alloc of `bytes` whose buffer id and event index are both `id` (the
// offline plan finds a buffer by its event).
inline AllocResult AllocBytes(Allocator& a, uint64_t id, uint64_t bytes, uint64_t stream = 0) {
  AllocRequest req;
  req.id = BufferId(id);
  req.bytes = Bytes(bytes);
  req.stream = StreamId(stream);
  req.event = EventIndex(id);
  return a.Allocate(req);
}

// "cause" or "cause[key]": how a part is named in PartsText.
inline std::string PartLabel(const std::string& cause, const std::string& key) {
  return key.empty() ? cause : fmt::format("{}[{}]", cause, key);
}

// "requested=N; cause[key]=bytes/blocks; ..." in the walk's order, after
// checking that the parts add up to reserved and that reserved is the
// policy's own counter.
inline std::string PartsText(const Allocator& a) {
  const ReservedWalk w = WalkReserved(a, 3);
  Bytes sum = w.requested;
  std::string out = fmt::format("requested={}", w.requested.value());
  for (const ReservedPart& p : w.parts) {
    sum += p.bytes;
    out += fmt::format("; {}={}/{}", PartLabel(p.cause, p.key), p.bytes.value(), p.blocks);
  }
  EXPECT_EQ(sum, w.reserved) << out;
  EXPECT_EQ(w.reserved, a.ReservedBytes()) << out;
  return out;
}

struct WorkedCase {
  std::string name;                                   // the test's name: InactiveSplitSmallPool
  std::string policy;                                 // the registry's name, which is the allocator's name()
  std::string cause;                                  // the part the case is worked for...
  std::string key;                                    // ...and its key ("" for none)
  std::function<std::unique_ptr<Allocator>()> build;  // the sequence of allocs and frees
  std::string parts;                                  // PartsText of the built state, worked by hand
};

// gtest prints a failing case by its name, not its bytes.
inline void PrintTo(const WorkedCase& c, std::ostream* os) { *os << c.name; }

// Each file's cases (reserved_parts_<policy>_test.cc).
std::vector<WorkedCase> TorchWorkedCases();
std::vector<WorkedCase> BfcWorkedCases();
std::vector<WorkedCase> TpuWorkedCases();
std::vector<WorkedCase> CudaAsyncAndBaselineWorkedCases();

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_CORE_RESERVED_PARTS_CASES_H_
