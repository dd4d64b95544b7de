// Everything that looks at the allocator without changing it: stats, counters,
// the memory-map walk, the invariant oracle and the host footprint.
#include <algorithm>
#include <vector>

#include "allocator/bfc/bfc_allocator.h"
#include "fmt/format.h"

namespace hbmsim::allocator {

using bfc::ChunkHandle;
using bfc::kInvalidChunk;

AllocatorStats BfcAllocator::GetStats() const {
  AllocatorStats s = stats_;
  s.largest_free_block_bytes = StatBytes(LargestRequest());
  return s;
}

void BfcAllocator::AppendCounters(Counters& out) const {
  out.push_back({"regions", static_cast<int64_t>(regions_.size())});
  out.push_back({"extends", extends_});
  out.push_back({"region_extensions", region_extensions_});
  out.push_back({"garbage_collections", garbage_collections_});
  out.push_back({"regions_released", regions_released_});
  out.push_back({"device_alloc_failures", device_alloc_failures_});
}

namespace {

// splitmix64's finaliser: every input bit moves every output bit.
uint64_t Mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Two independent running hashes of a sequence of words.
struct FingerprintBuilder {
  StateFingerprint f{0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL};
  void Add(uint64_t word) {
    f.a = Mix(f.a ^ word) + 0x9e3779b97f4a7c15ULL;
    f.b = Mix(f.b + word * 0xff51afd7ed558ccdULL) ^ 0xc4ceb9fe1a85ec53ULL;
  }
};

}  // namespace

// The state the next decisions read: the regions and their chunks in address
// order, each chunk's address and length (the tail's length is the limit's, so it is left out:
// a run at another limit of the window holds the same chunks), and the
// buffer it holds (the engine frees by buffer). Bins follow from the free
// chunks, handles are names only, the stats decide nothing.
std::optional<StateFingerprint> BfcAllocator::Fingerprint(uint64_t max_work) const {
  if (!windows_ || chunks_.records() - chunks_.released() > max_work) return std::nullopt;
  FingerprintBuilder fp;
  fp.Add(regions_.size());
  // A growing pool's next Extend reads curr, the same under every limit of the
  // window (without growth it is ceil256(limit), so left out).
  if (options_.allow_growth) fp.Add(curr_region_allocation_bytes_.value());
  for (const Region& r : regions_) {
    fp.Add(r.base.value());  // where regions part (their sizes follow from the chunks)
    for (ChunkHandle h = r.first; h != kInvalidChunk; h = chunks_.at(h).next) {
      const bfc::Chunk& c = chunks_.at(h);
      fp.Add(c.ptr);
      fp.Add(h == last_ ? ~uint64_t{0} : c.size);
      fp.Add(c.in_use() ? c.buffer_id : ~uint64_t{0});
    }
  }
  return fp.f;
}

void BfcAllocator::WalkMemoryMap(MemoryMapVisitor& v) const {
  for (uint64_t i = 0; i < regions_.size(); ++i) {
    const Region& r = regions_[i];
    v.OnRegion(RegionInfo{r.base, r.size, i});
    for (ChunkHandle h = r.first; h != kInvalidChunk; h = chunks_.at(h).next) {
      const bfc::Chunk& c = chunks_.at(h);
      BlockInfo b;
      b.offset = Offset(c.ptr);
      b.size = Bytes(c.size);
      b.requested = Bytes(c.requested_size);
      b.state = c.in_use() ? BlockState::kInUse : BlockState::kFree;
      b.handle = h;
      b.next_handle = c.next;  // kInvalidChunk == kNoHandle == SIZE_MAX
      b.id = c.in_use() ? c.buffer_id : 0;
      b.stream = c.in_use() ? c.stream : 0;
      v.OnBlock(b);
    }
  }
}

uint64_t BfcAllocator::host_footprint_bytes() const {
  return sizeof(*this) + chunks_.footprint_bytes() + bins_.footprint_bytes() +
         regions_.capacity() * sizeof(Region);
}

absl::Status BfcAllocator::CheckInvariants() const {
  if (absl::Status s = CheckMemoryMapTiling(*this); !s.ok()) return s;
  if (absl::Status s = CheckChunks(); !s.ok()) return s;
  return CheckBins();
}

// Walks every region's chunk list: links, alignment, coalescing, bin
// membership, and recounts what the stats and the handle store claim.
absl::Status BfcAllocator::CheckChunks() const {
  std::vector<bool> reached(chunks_.records(), false);
  Bytes pool;
  int64_t live = 0;
  int64_t in_use_bytes = 0;
  uint64_t free_chunks = 0;
  for (const Region& r : regions_) {
    pool += r.size;
    ChunkHandle prev = kInvalidChunk;
    for (ChunkHandle h = r.first; h != kInvalidChunk; prev = h, h = chunks_.at(h).next) {
      if (h >= chunks_.records() || reached[h])
        return absl::InternalError(fmt::format("chunk {} reached twice", h));
      reached[h] = true;
      const bfc::Chunk& c = chunks_.at(h);
      if (c.prev != prev)
        return absl::InternalError(fmt::format("chunk {} has prev {}, not {}", h, c.prev, prev));
      if (c.size % allocator::kMinAllocationSize != 0 || c.ptr % allocator::kMinAllocationSize != 0) {
        return absl::InternalError(
            fmt::format("chunk {} at {} of size {} is not 256-aligned", h, c.ptr, c.size));
      }
      if (c.in_use()) {
        ++live;
        in_use_bytes += static_cast<int64_t>(c.size);
        if (c.bin_num != bfc::kNotBinned)
          return absl::InternalError(fmt::format("in-use chunk {} is binned", h));
        continue;
      }
      ++free_chunks;
      if (absl::Status s = CheckFreeChunk(h, prev, c); !s.ok()) return s;
    }
  }
  if (pool != pool_bytes_ || stats_.pool_bytes != static_cast<int64_t>(pool.value())) {
    return absl::InternalError(
        fmt::format("pool_bytes is {} but regions sum to {}", pool_bytes_.value(), pool.value()));
  }
  if (pool > options_.memory_limit || (options_.device_capacity && pool > *options_.device_capacity)) {
    return absl::InternalError(fmt::format("pool {} exceeds the limit or the device", pool.value()));
  }
  if (live != live_chunks_ || in_use_bytes != stats_.bytes_in_use) {
    return absl::InternalError(fmt::format("recount: {} live chunks of {} bytes, stats say {} of {}", live,
                                           in_use_bytes, live_chunks_, stats_.bytes_in_use));
  }
  if (free_chunks != bins_.size()) {
    return absl::InternalError(fmt::format("{} free chunks but {} bin entries", free_chunks, bins_.size()));
  }
  return CheckReleasedHandles(reached);
}

absl::Status BfcAllocator::CheckFreeChunk(ChunkHandle h, ChunkHandle prev, const bfc::Chunk& c) const {
  if (prev != kInvalidChunk && !chunks_.at(prev).in_use()) {
    return absl::InternalError(fmt::format("free chunks {} and {} are adjacent", prev, h));
  }
  if (c.bin_num != allocator::BinNumForSize(Bytes(c.size))) {
    return absl::InternalError(fmt::format("free chunk {} of size {} is in bin {}", h, c.size, c.bin_num));
  }
  const allocator::FreeEntry* e = bins_.Find(c.bin_num, c.size, c.ptr);
  if (e == nullptr || e->handle != h) {
    return absl::InternalError(fmt::format("free chunk {} has no bin entry of its own", h));
  }
  return absl::OkStatus();
}

// Released handles: disjoint from live chunks (`reached`), and together they are all records.
absl::Status BfcAllocator::CheckReleasedHandles(std::vector<bool>& reached) const {
  uint64_t released = 0;
  for (ChunkHandle h = chunks_.free_head(); h != kInvalidChunk; h = chunks_.at(h).next, ++released) {
    if (h >= chunks_.records() || reached[h]) {
      return absl::InternalError(fmt::format("released handle {} is live or repeated", h));
    }
    reached[h] = true;
  }
  if (released != chunks_.released() || std::count(reached.begin(), reached.end(), false) != 0) {
    return absl::InternalError(
        fmt::format("{} records, {} released, some neither live nor released", chunks_.records(), released));
  }
  return absl::OkStatus();
}

// The bins' own layout holds, and every bin entry is a free chunk filed in
// this bin under its current size and address.
absl::Status BfcAllocator::CheckBins() const {
  if (absl::Status s = bins_.CheckInvariants(); !s.ok()) return s;
  absl::Status status = absl::OkStatus();
  for (int b = 0; b < kNumBins && status.ok(); ++b) {
    bins_.ForEach(b, [&](const allocator::FreeEntry& e) {
      if (!status.ok()) return;
      if (e.handle >= chunks_.records()) {
        status = absl::InternalError(fmt::format("bin {} holds handle {}, never issued", b, e.handle));
        return;
      }
      const bfc::Chunk& c = chunks_.at(e.handle);
      if (c.in_use() || c.bin_num != b || c.size != e.size || c.ptr != e.ptr) {
        status = absl::InternalError(
            fmt::format("bin {} holds chunk {} (in use {}, bin {})", b, e.handle, c.in_use(), c.bin_num));
      }
    });
  }
  return status;
}


// A region's last free chunk is the part of it no request has reached since
// the region grew (or the space a coalescing left at its top); any other free
// chunk waits in its bin for a request of that size class.
ReservedCause BfcAllocator::CauseOf(const BlockContext& c) const {
  if (c.block.state != BlockState::kFree) return GenericCause(c);
  if (c.last_in_region) return {"region_tail", fmt::format("region {}", c.region.index)};
  return {"free_chunk", fmt::format("bin {}", allocator::BinNumForSize(c.block.size))};
}

}  // namespace hbmsim::allocator
