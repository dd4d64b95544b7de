#include "trace/xplane/start_state.h"

#include <algorithm>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "fmt/format.h"
#include "trace/xplane/grown_layout.h"
#include "trace/xplane/region_sizes.h"

namespace hbmsim::trace::xplane {
namespace {

constexpr int64_t kChunkAlign = 256;  // BFC's kMinAllocationSize

std::string_view KindName(const MemoryRecord& r) {
  return r.allocation ? "MemoryAllocation" : "MemoryDeallocation";
}

absl::Status RecordError(std::string_view source, const MemoryRecord& r, std::string_view what) {
  return absl::InvalidArgumentError(fmt::format("{}: {}: {} {}", source, r.where, KindName(r), what));
}

// Pass 1: every record's chunk size, the known live chunks, what was touched.
class Walker {
 public:
  Walker(const AllocatorRecording& rec, std::string_view source, StartState& out)
      : rec_(rec), source_(source), out_(out) {}

  absl::Status Run() {
    for (size_t i = 0; i < rec_.records.size(); ++i) {
      if (absl::Status s = Step(i); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  const std::vector<Range>& touched() const { return touched_; }
  // Ends of chunks handed out whole though larger than the request: the free
  // chunk they came from ended there.
  const std::vector<uint64_t>& unsplit_ends() const { return unsplit_ends_; }

 private:
  absl::Status Step(size_t i) {
    const MemoryRecord& r = rec_.records[i];
    if (r.missing == Missing::kBytes) {  // no address: the trace moves them through unknown chunks
      out_.records.push_back({*r.allocation_bytes, *r.allocation_bytes, "", false});
      return absl::OkStatus();
    }
    if (!r.addr) return RecordError(source_, r, "without addr");
    const uint64_t addr = *r.addr;
    ResolvedRecord rr;
    auto live = live_.find(addr);
    if (r.allocation_bytes && *r.allocation_bytes >= 0) {
      rr.chunk_bytes = *r.allocation_bytes;
    } else if (r.inferred_chunk) {
      rr.chunk_bytes = *r.inferred_chunk;
      rr.chunk_from = "reconciled from the figures around a lost event";
    } else if (!r.allocation && live != live_.end()) {
      rr.chunk_bytes = live->second;
      rr.chunk_from = "its allocation's chunk";
    } else if (prev_allocated_ && r.bytes_allocated) {
      rr.chunk_bytes =
          r.allocation ? *r.bytes_allocated - *prev_allocated_ : *prev_allocated_ - *r.bytes_allocated;
      rr.chunk_from = "the change of bytes_allocated";
    } else if (r.requested_bytes && *r.requested_bytes >= 0) {
      rr.chunk_bytes = (*r.requested_bytes + kChunkAlign - 1) / kChunkAlign * kChunkAlign;
      rr.chunk_from = "requested_bytes rounded up to 256";
    }
    if (rr.chunk_bytes < 0)
      return RecordError(source_, r, fmt::format("with a negative size {}", rr.chunk_bytes));
    rr.requested_bytes = r.requested_bytes.value_or(rr.chunk_bytes);
    if (r.bytes_allocated) prev_allocated_ = r.bytes_allocated;
    if (r.allocation) {
      if (live != live_.end()) {
        return RecordError(source_, r, fmt::format("at address {:#x}, which is still allocated", addr));
      }
      live_.emplace(addr, rr.chunk_bytes);
      allocated_.insert(addr);
      Touch(addr, rr.chunk_bytes);
      const int64_t rounded = (rr.requested_bytes + kChunkAlign - 1) / kChunkAlign * kChunkAlign;
      if (rr.chunk_bytes > rounded) unsplit_ends_.push_back(addr + static_cast<uint64_t>(rr.chunk_bytes));
    } else if (live != live_.end()) {
      live_.erase(live);
    } else if (allocated_.contains(addr)) {
      return RecordError(
          source_, r, fmt::format("of address {:#x}, which the recording allocated and already freed", addr));
    } else {
      rr.preexisting = true;
      if (rr.chunk_bytes == 0) {  // no field tells its size; a BFC chunk is never smaller
        rr.chunk_bytes = kChunkAlign;
        rr.chunk_from = "none recorded: the smallest chunk, 256 bytes";
      }
      out_.chunks.push_back({addr, rr.chunk_bytes, StartChunkKind::kKnown, i});
      allocated_.insert(addr);  // a second free of it is an error too
      Touch(addr, rr.chunk_bytes);
    }
    out_.records.push_back(std::move(rr));
    return absl::OkStatus();
  }

  void Touch(uint64_t addr, int64_t size) {
    if (size > 0) touched_.push_back({addr, addr + static_cast<uint64_t>(size)});
  }

  const AllocatorRecording& rec_;
  std::string_view source_;
  StartState& out_;
  absl::btree_map<uint64_t, int64_t> live_;  // address -> chunk size, allocated in the recording
  absl::btree_set<uint64_t> allocated_;      // every address allocated (or freed as preexisting)
  std::optional<int64_t> prev_allocated_;
  std::vector<Range> touched_;
  std::vector<uint64_t> unsplit_ends_;
};

std::vector<Range> Merge(std::vector<Range> r) {
  std::sort(r.begin(), r.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
  std::vector<Range> out;
  for (const Range& x : r) {
    if (!out.empty() && x.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, x.end);
    } else {
      out.push_back(x);
    }
  }
  return out;
}

// A chunk freed without being allocated was live from before the first
// record to its free, so it can overlap neither another such chunk nor a chunk
// the recording allocates before that free: records that say otherwise
// contradict each other (the events built from them could not hold both).
absl::Status CheckKnownChunksFit(const AllocatorRecording& rec, std::string_view source,
                                 const StartState& s) {
  std::vector<StartChunk> known = s.chunks;
  std::sort(known.begin(), known.end(),
            [](const StartChunk& a, const StartChunk& b) { return a.addr < b.addr; });
  auto end_of = [](const StartChunk& c) { return c.addr + static_cast<uint64_t>(c.size); };
  for (size_t i = 1; i < known.size(); ++i) {
    if (known[i].addr < end_of(known[i - 1])) {
      return RecordError(
          source, rec.records[known[i].freed_by],
          fmt::format("of address {:#x}, inside the chunk at {:#x} that {} frees", known[i].addr,
                      known[i - 1].addr, rec.records[known[i - 1].freed_by].where));
    }
  }
  for (size_t i = 0; i < rec.records.size(); ++i) {
    const MemoryRecord& r = rec.records[i];
    const int64_t size = s.records[i].chunk_bytes;
    if (!r.allocation || size <= 0) continue;
    const uint64_t begin = *r.addr, end = begin + static_cast<uint64_t>(size);
    auto it = std::upper_bound(known.begin(), known.end(), begin,
                               [&](uint64_t a, const StartChunk& c) { return a < end_of(c); });
    for (; it != known.end() && it->addr < end; ++it) {
      if (it->freed_by < i) continue;
      return RecordError(source, r,
                         fmt::format("at address {:#x} overlaps the chunk at {:#x}, live since before the "
                                     "recording until {} frees it",
                                     begin, it->addr, rec.records[it->freed_by].where));
    }
  }
  return absl::OkStatus();
}

// The totals of the first record: bytes in use before it, the limit, the peak.
void ReadTotals(const AllocatorRecording& rec, StartState& s, int64_t known_bytes) {
  const MemoryRecord& first = rec.records.front();
  const int64_t chunk = s.records.front().chunk_bytes;
  if (first.bytes_allocated) {
    s.bytes_in_use_before = *first.bytes_allocated + (first.allocation ? -chunk : chunk);
  } else {
    s.bytes_in_use_before = known_bytes;
    s.notes.push_back(
        "the first record has no bytes_allocated: bytes in use before it taken as the known chunks");
  }
  for (const MemoryRecord& r : rec.records) {
    if (r.bytes_allocated && r.bytes_available) {
      s.limit = *r.bytes_allocated + *r.bytes_available + r.bytes_reserved.value_or(0);
      break;
    }
  }
  if (first.peak_bytes_in_use) {
    const bool raised_by_first = first.allocation && first.bytes_allocated == first.peak_bytes_in_use;
    s.peak_before = raised_by_first ? s.bytes_in_use_before : *first.peak_bytes_in_use;
  }
}

// Lays out [base, highest touched): the unknown bytes below and in the gaps,
// the known chunks, free space for the rest.
void LayOut(std::vector<Range> touched, StartState& s) {
  std::vector<StartChunk> known = std::move(s.chunks);
  std::sort(known.begin(), known.end(),
            [](const StartChunk& a, const StartChunk& b) { return a.addr < b.addr; });
  s.chunks.clear();
  int64_t left = s.unknown_bytes;
  // Placed from the top: the space above the highest touched address is a
  // gap too, and gaps are taken from the top down (the oldest buffers sit highest).
  if (s.top_down) touched.push_back({static_cast<uint64_t>(*s.limit), static_cast<uint64_t>(*s.limit)});
  std::vector<StartChunk> gaps_taken;
  for (size_t k = 1; k < touched.size(); ++k) {
    const size_t i = s.top_down ? touched.size() - k : k;
    const int64_t gap = static_cast<int64_t>(touched[i].begin - touched[i - 1].end);
    if (gap > 0 && gap <= left) {
      gaps_taken.push_back({touched[i - 1].end, gap, StartChunkKind::kUnknown, 0});
      left -= gap;
    }
  }
  if (left > 0) {
    if (static_cast<uint64_t>(left) > s.lowest_touched) {
      s.notes.push_back(
          fmt::format("{} unknown live bytes do not fit below the lowest address; placed at 0", left));
    }
    const uint64_t base =
        s.lowest_touched - std::min<uint64_t>(static_cast<uint64_t>(left), s.lowest_touched);
    s.chunks.push_back({base, static_cast<int64_t>(s.lowest_touched - base), StartChunkKind::kUnknown, 0});
  }
  // Merge the in-use chunks (known + gaps) in address order, free space between them.
  std::vector<StartChunk> used = known;
  used.insert(used.end(), gaps_taken.begin(), gaps_taken.end());
  std::sort(used.begin(), used.end(),
            [](const StartChunk& a, const StartChunk& b) { return a.addr < b.addr; });
  uint64_t at = s.lowest_touched;
  for (const StartChunk& c : used) {
    if (c.addr > at) s.chunks.push_back({at, static_cast<int64_t>(c.addr - at), StartChunkKind::kHole, 0});
    if (c.addr < at) {
      s.notes.push_back(fmt::format("recorded chunks overlap at {:#x}; the later one is left out", c.addr));
      continue;
    }
    s.chunks.push_back(c);
    at = c.addr + static_cast<uint64_t>(c.size);
  }
  // Free space up to the highest touched address is part of the free tail.
}

}  // namespace

absl::StatusOr<StartState> InferStartState(const AllocatorRecording& rec, std::string_view source) {
  StartState s;
  if (rec.records.empty()) return s;
  Walker walker(rec, source, s);
  if (absl::Status st = walker.Run(); !st.ok()) return st;
  if (absl::Status st = CheckKnownChunksFit(rec, source, s); !st.ok()) return st;
  int64_t known_bytes = 0;
  for (const StartChunk& c : s.chunks) known_bytes += c.size;
  ReadTotals(rec, s, known_bytes);
  s.unknown_bytes = s.bytes_in_use_before - known_bytes;
  if (s.unknown_bytes < 0) {
    s.notes.push_back(
        fmt::format("bytes in use before the first record ({}) are fewer than the chunks freed without being "
                    "allocated ({})",
                    s.bytes_in_use_before, known_bytes));
    s.unknown_bytes = 0;
  }
  const std::vector<Range> touched = Merge(walker.touched());
  if (!touched.empty()) {
    s.lowest_touched = touched.front().begin;
    s.highest_touched = touched.back().end;
  }
  for (const ResolvedRecord& r : s.records) {
    if (!r.chunk_from.empty()) {
      s.notes.push_back("chunk sizes missing from records were inferred (" + r.chunk_from + ", ...)");
      break;
    }
  }
  s.top_down = s.limit && !touched.empty() && s.highest_touched <= static_cast<uint64_t>(*s.limit);
  if (s.top_down) s.reserved_before = rec.records.front().bytes_reserved;
  s.pool_estimate = EstimatePool(rec, s);
  if (!s.top_down && s.pool_estimate && s.limit && *s.pool_estimate < *s.limit - *s.limit / 100) {
    s.grown = true;
    LayOutGrown(rec, touched, walker.unsplit_ends(), s);
  } else {
    LayOut(touched, s);
  }
  return s;
}

}  // namespace hbmsim::trace::xplane
