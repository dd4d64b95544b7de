#include "trace/xplane/sampled.h"

#include <algorithm>
#include <utility>

#include "absl/container/btree_map.h"
#include "fmt/format.h"

namespace hbmsim::trace::xplane {
namespace {

constexpr int64_t kSmallestBfcChunk = 256;  // when the recording allocates nothing

// Address ranges any chunk of the recording has covered so far, merged, so
// an overlap test is two lookups (a hostile file may hold millions of records).
class RangeSet {
 public:
  bool Overlaps(uint64_t begin, uint64_t end) const {
    auto it = ranges_.upper_bound(begin);
    if (it != ranges_.end() && it->first < end) return true;
    return it != ranges_.begin() && std::prev(it)->second > begin;
  }
  void Add(uint64_t begin, uint64_t end) {
    if (end <= begin) return;
    auto it = ranges_.upper_bound(begin);
    if (it != ranges_.begin() && std::prev(it)->second >= begin) {
      --it;
      begin = it->first;
      end = std::max(end, it->second);
      it = ranges_.erase(it);
    }
    while (it != ranges_.end() && it->first <= end) {
      end = std::max(end, it->second);
      it = ranges_.erase(it);
    }
    ranges_.emplace(begin, end);
  }

 private:
  absl::btree_map<uint64_t, uint64_t> ranges_;  // begin -> end, disjoint, not touching
};

uint64_t End(uint64_t addr, int64_t size) { return addr + static_cast<uint64_t>(std::max<int64_t>(size, 0)); }

// Saturating: hostile figures near ±2^63 must not wrap.
int64_t Add(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return b > 0 ? INT64_MAX : INT64_MIN;
  return out;
}

class Reconciler {
 public:
  Reconciler(const AllocatorRecording& rec, MissingEvents& out) : out_(out), free_lost_(rec.records.size()) {
    absl::btree_map<uint64_t, size_t> open;  // address -> its allocation not yet freed
    for (size_t i = 0; i < rec.records.size(); ++i) {
      const MemoryRecord& r = rec.records[i];
      if (r.allocation && r.allocation_bytes && *r.allocation_bytes > 0)
        smallest_ = std::min(smallest_.value_or(INT64_MAX), *r.allocation_bytes);
      if (!r.addr) continue;
      auto it = open.find(*r.addr);
      if (it != open.end()) {
        free_lost_[it->second] = r.allocation;  // allocated again before any free: that free is lost
        open.erase(it);
      }
      if (r.allocation) open.emplace(*r.addr, i);
    }
  }

  // Appends the records missing before `r` (the i-th recorded), then `r`.
  void Take(size_t i, MemoryRecord r, std::vector<MemoryRecord>& into) {
    MissingGap gap{i, r.where, 0, 0, 0};
    int64_t net = 0;  // bytes the inserted events with an address moved
    int64_t delta = 0;
    if (!r.addr) {  // the start-state walk refuses it, naming the record
      into.push_back(std::move(r));
      return;
    }
    const uint64_t addr = *r.addr;
    if (r.allocation) {
      const int64_t chunk = r.allocation_bytes.value_or(r.requested_bytes.value_or(0));
      if (auto it = live_.find(addr); it != live_.end()) {
        into.push_back(Inserted(r, Missing::kFree, false, addr, it->second));
        net -= it->second;
        ++gap.frees;
        Unpend(addr, it->second);
        live_.erase(it);
      }
      live_[addr] = chunk;
      seen_[addr] = chunk;
      touched_.Add(addr, End(addr, chunk));
      delta = chunk;
    } else if (auto it = live_.find(addr); it != live_.end()) {
      delta = -r.allocation_bytes.value_or(it->second);
      live_.erase(it);
    } else {
      const int64_t chunk = r.allocation_bytes ? *r.allocation_bytes : SizeOfFree(r, addr, net);
      if (!r.allocation_bytes) r.inferred_chunk = chunk;
      if (seen_.contains(addr) || touched_.Overlaps(addr, End(addr, chunk))) {
        into.push_back(Inserted(r, Missing::kAllocation, true, addr, chunk));
        net += chunk;
        ++gap.allocations;
      }
      seen_[addr] = chunk;
      touched_.Add(addr, End(addr, chunk));
      delta = -chunk;
    }
    if (prev_heap_ && r.bytes_allocated) {
      gap.unexplained_bytes = Add(*r.bytes_allocated, -Add(Add(*prev_heap_, net), delta));
      if (gap.unexplained_bytes < 0) FreeEarly(r, gap, into);
      if (gap.unexplained_bytes != 0) {
        const bool in = gap.unexplained_bytes > 0;
        MemoryRecord bytes =
            Inserted(r, Missing::kBytes, in, 0, in ? gap.unexplained_bytes : -gap.unexplained_bytes);
        bytes.addr.reset();
        into.push_back(std::move(bytes));  // before the record's own event
      }
    }
    prev_heap_ = r.bytes_allocated ? r.bytes_allocated
                 : prev_heap_      ? std::optional<int64_t>(Add(Add(*prev_heap_, net), delta))
                                   : std::nullopt;
    if (r.allocation && free_lost_[i]) pending_.emplace(live_[addr], addr);
    Count(gap);
    into.push_back(std::move(r));
  }

 private:
  // Bytes freed in the gap at no recorded address: first the chunks whose
  // free is known to be lost (their address is allocated again later), the
  // largest that fits first, so they are freed when the figures say rather
  // than just before their address is reused.
  void FreeEarly(const MemoryRecord& r, MissingGap& gap, std::vector<MemoryRecord>& into) {
    while (gap.unexplained_bytes < 0 && !pending_.empty()) {
      auto it = pending_.upper_bound(-gap.unexplained_bytes);
      if (it == pending_.begin()) return;
      --it;
      const auto [size, addr] = *it;
      pending_.erase(it);
      live_.erase(addr);
      into.push_back(Inserted(r, Missing::kFree, false, addr, size));
      gap.unexplained_bytes += size;
      ++gap.frees;
    }
  }

  void Unpend(uint64_t addr, int64_t size) {
    for (auto [it, end] = pending_.equal_range(size); it != end; ++it) {
      if (it->second == addr) {
        pending_.erase(it);
        return;
      }
    }
  }

  // A free that records no size of a chunk the recording did not allocate
  // in view: the chunk last seen at that address (its allocation is lost in
  // this gap, so the gap's figures cannot tell its size), else the heap's
  // drop across the gap net of the inserted events (a chunk live before).
  int64_t SizeOfFree(const MemoryRecord& r, uint64_t addr, int64_t net) const {
    if (auto it = seen_.find(addr); it != seen_.end() && it->second > 0) return it->second;
    if (prev_heap_ && r.bytes_allocated) {
      const int64_t drop = Add(Add(*prev_heap_, net), -*r.bytes_allocated);
      if (drop > 0) return drop;
    }
    return smallest_.value_or(kSmallestBfcChunk);
  }

  static MemoryRecord Inserted(const MemoryRecord& next, Missing why, bool allocation, uint64_t addr,
                               int64_t bytes) {
    MemoryRecord m;
    m.allocation = allocation;
    m.time_ps = next.time_ps;
    m.addr = addr;
    m.allocation_bytes = bytes;
    m.requested_bytes = bytes;
    m.missing = why;
    m.where = fmt::format("missing before {}", next.where);
    return m;
  }

  void Count(const MissingGap& gap) {
    ++out_.recorded;
    out_.frees += gap.frees;
    out_.allocations += gap.allocations;
    if (gap.unexplained_bytes > 0) out_.bytes_in = Add(out_.bytes_in, gap.unexplained_bytes);
    if (gap.unexplained_bytes < 0) out_.bytes_out = Add(out_.bytes_out, -gap.unexplained_bytes);
    out_.unexplained += gap.unexplained_bytes != 0;
    if (gap.frees > 0 || gap.allocations > 0 || gap.unexplained_bytes != 0) out_.gaps.push_back(gap);
  }

  MissingEvents& out_;
  absl::btree_map<uint64_t, int64_t> live_;  // address -> chunk, allocated in the recording
  std::vector<bool> free_lost_;              // per record: an allocation whose free the sample lost
  absl::btree_multimap<int64_t, uint64_t> pending_;  // live chunks whose free is lost: size -> address
  absl::btree_map<uint64_t, int64_t> seen_;  // address -> the last chunk allocated or freed there
  RangeSet touched_;
  std::optional<int64_t> prev_heap_;
  std::optional<int64_t> smallest_;
};

}  // namespace

std::string MissingEvents::Note() const {
  std::string where;
  for (size_t i = 0; i < gaps.size() && i < 3; ++i)
    where += fmt::format("{}{}", i ? ", " : "", gaps[i].where);
  return fmt::format(
      "sampled: {} gaps of {} records lost events (reconciled from the figures): {} frees and {} allocations "
      "missing at recorded addresses, {} gaps where bytes in use moved by events of unknown address "
      "(+{} B allocated, -{} B freed); the first before {}",
      gaps.size(), recorded, frees, allocations, unexplained, bytes_in, bytes_out, where);
}

MissingEvents ReconcileSampled(AllocatorRecording& rec) {
  MissingEvents out;
  Reconciler r(rec, out);
  std::vector<MemoryRecord> records;
  records.reserve(rec.records.size());
  for (size_t i = 0; i < rec.records.size(); ++i) r.Take(i, std::move(rec.records[i]), records);
  rec.records = std::move(records);
  return out;
}

}  // namespace hbmsim::trace::xplane
