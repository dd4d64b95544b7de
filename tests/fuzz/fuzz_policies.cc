// libFuzzer target: bytes become an allocation program that every registered
// policy replays in lockstep (tests/hardening/differential.h), with
// CheckInvariants after every op and the cross-policy properties: verdicts,
// sizes, live sets, stats, "nobody fails before ideal", agreement until the
// first failure. In the sanitizer build HBMSIM_DCHECK (allocator/core/
// dcheck.h) also aborts on unchecked unit arithmetic that would wrap and on
// frees of handles a policy never issued.
//
//   byte 0        the limit: 1 MiB << (b % 12), so 1 MiB .. 2 GiB
//   then ops      c even: alloc of ((b1 << 8) | b2) << ((c >> 1) % 16) bytes
//                         (0 to ~2 GiB) on stream (c >> 5) & 1
//                 c odd:  free of the live buffer at index b % live count
// A program is valid by construction (frees only live ids), as a trace the
// reader accepted would be; at most kMaxOps ops are taken.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/hardening/differential.h"

namespace {

using hbmsim::testing::Op;
using hbmsim::testing::OpKind;

constexpr size_t kMaxOps = 4096;

std::vector<Op> DecodeProgram(const uint8_t* data, size_t size) {
  std::vector<Op> ops;
  std::vector<uint64_t> live;
  uint64_t next_id = 1;
  size_t i = 1;
  while (i < size && ops.size() < kMaxOps) {
    const uint8_t c = data[i++];
    if ((c & 1) == 0) {
      if (i + 2 > size) break;
      const uint64_t mantissa = (uint64_t{data[i]} << 8) | data[i + 1];
      i += 2;
      Op op;
      op.kind = OpKind::kAlloc;
      op.id = next_id++;
      op.bytes = mantissa << ((c >> 1) % 16);
      op.stream = (c >> 5) & 1;
      ops.push_back(op);
      live.push_back(op.id);
    } else if (!live.empty()) {
      if (i >= size) break;
      const size_t at = data[i++] % live.size();
      Op op;
      op.kind = OpKind::kFree;
      op.id = live[at];
      live[at] = live.back();
      live.pop_back();
      ops.push_back(op);
    }
  }
  return ops;
}

}  // namespace

HBMSIM_FUZZ_ENTRY(policies, PoliciesFuzzCorpus) {
  if (size == 0) return 0;
  const hbmsim::Bytes limit((uint64_t{1} << 20) << (data[0] % 12));
  const std::vector<Op> ops = DecodeProgram(data, size);
  // offline plans from the program written as a trace; one file per process.
  static const std::string trace_path = fmt::format("/tmp/hbmsim_fuzz_policies_{}.trace", ::getpid());
  const std::string broken = hbmsim::testing::RunDifferential(0, ops, limit, trace_path);
  if (!broken.empty()) hbmsim::fuzz::Fail(broken);
  return 0;
}
