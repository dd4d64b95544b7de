// Differential test: BfcAllocator against a deliberately naive model of REF's
// placement rules (§5 checklist 1-4), written from the reference text alone:
// an address-ordered map of chunks, best fit by a linear scan, no bins, no
// handles. With allow_growth = false the first Extend takes floor256(limit)
// and the pool never grows again, so the model needs no growth logic.
#include <map>
#include <optional>

#include "sim/all_layers.h"
#include "tests/allocator/bfc/bfc_test_util.h"
#include "tests/common/random_ops.h"

namespace hbmsim::testing {
namespace {

class NaiveBfc {
 public:
  NaiveBfc(uint64_t limit, uint64_t max_fragmentation) : limit_(limit), max_frag_(max_fragmentation) {}

  struct Outcome {
    bool ok = false;
    uint64_t offset = 0;
    uint64_t size = 0;
    uint64_t free_bytes = 0;
  };

  Outcome Allocate(uint64_t bytes) {
    const uint64_t rounded = (bytes + 255) / 256 * 256;  // test sizes never come near 2^64
    if (chunks_.empty() && rounded <= limit_ / 256 * 256) {
      chunks_[0] = Piece{limit_ / 256 * 256, false};
    }
    std::optional<uint64_t> best;
    for (const auto& [offset, piece] : chunks_) {
      if (piece.used || piece.size < rounded) continue;
      if (!best || piece.size < chunks_[*best].size) best = offset;  // ties: lower address came first
    }
    if (!best) return Outcome{false, 0, 0, FreeBytes()};
    Piece& p = chunks_[*best];
    const uint64_t rest = p.size - rounded;
    if (p.size >= 2 * rounded || (rest >= max_frag_ && rest > 0)) {
      chunks_[*best + rounded] = Piece{rest, false};
      p.size = rounded;
    }
    p.used = true;
    return Outcome{true, *best, p.size, 0};
  }

  void Free(uint64_t offset) {
    auto it = chunks_.find(offset);
    it->second.used = false;
    auto next = std::next(it);
    if (next != chunks_.end() && !next->second.used) {
      it->second.size += next->second.size;
      chunks_.erase(next);
    }
    if (it != chunks_.begin()) {
      auto prev = std::prev(it);
      if (!prev->second.used) {
        prev->second.size += it->second.size;
        chunks_.erase(it);
      }
    }
  }

 private:
  struct Piece {
    uint64_t size;
    bool used;
  };
  uint64_t FreeBytes() const {
    uint64_t free = chunks_.empty() ? limit_ / 256 * 256 : 0;
    for (const auto& [offset, piece] : chunks_) free += piece.used ? 0 : piece.size;
    return free;
  }

  uint64_t limit_;
  uint64_t max_frag_;
  std::map<uint64_t, Piece> chunks_;
};

void CompareOnRandomProgram(uint64_t limit, double fraction, uint64_t seed) {
  BfcOptions o = Limit(limit);
  o.fragmentation_fraction = fraction;
  BfcAllocator real(o);
  NaiveBfc model(limit, real.max_internal_fragmentation_bytes().value());
  ProgramShape shape;
  shape.num_ops = 3000;
  shape.max_bytes = 512 * kMiB;                          // large enough to reach the 128 MiB rule
  std::map<uint64_t, std::pair<Handle, uint64_t>> live;  // id -> (handle, offset)
  int index = 0;
  for (const Op& op : GenerateProgram(seed, shape)) {
    const std::string where =
        fmt::format("limit={} fraction={} seed={} op {}: {}", limit, fraction, seed, index++, OpToString(op));
    if (op.kind == OpKind::kAlloc) {
      const AllocResult r = Alloc(real, op.id, op.bytes);
      if (op.bytes == 0) continue;
      const NaiveBfc::Outcome m = model.Allocate(op.bytes);
      ASSERT_EQ(r.ok(), m.ok) << where;
      if (!m.ok) {
        ASSERT_EQ(r.free_bytes.value(), m.free_bytes) << where;
        continue;
      }
      ASSERT_EQ(r.offset.value(), m.offset) << where;
      ASSERT_EQ(r.size.value(), m.size) << where;
      live[op.id] = {r.handle, m.offset};
    } else if (auto it = live.find(op.id); it != live.end()) {
      real.Free(it->second.first);
      model.Free(it->second.second);
      live.erase(it);
    }
  }
}

TEST(BfcOracleTest, PlacementMatchesANaiveModelOfTheRules) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    CompareOnRandomProgram(8 * 1024 * kMiB, 0, seed);       // 8 GiB: mostly succeeds
    CompareOnRandomProgram(2 * 1024 * kMiB + 77, 0, seed);  // fails often
    CompareOnRandomProgram(4 * 1024 * kMiB, 0.01, seed);    // ~41 MiB split threshold
  }
}

}  // namespace
}  // namespace hbmsim::testing
