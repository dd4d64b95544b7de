// BFC chunks and the handle store that recycles them exactly as TSL does.
//
// A chunk is a contiguous piece of one region, free or in use. Chunks are
// records in a vector and a handle is the index of a record (TSL's ChunkHandle),
// so the `next H` numbers of a TF dump are reproducible. Released handles form
// a LIFO list threaded through `next`; a recycled record keeps its stale fields
// (requested_size above all), because TSL only overwrites what the caller sets.
#ifndef HBMSIM_ALLOCATOR_BFC_CHUNKS_H_
#define HBMSIM_ALLOCATOR_BFC_CHUNKS_H_

#include <cstdint>
#include <vector>

#include "allocator/core/bins.h"

namespace hbmsim::allocator::bfc {

using ChunkHandle = uint64_t;
// TSL's kInvalidChunkHandle (SIZE_MAX): dumps print it as 18446744073709551615.
inline constexpr ChunkHandle kInvalidChunk = ~uint64_t{0};
inline constexpr int kNotBinned = -1;

struct Chunk {
  uint64_t size = 0;            // bytes, a multiple of 256
  uint64_t requested_size = 0;  // the caller's bytes; stale once free, as in TF
  uint64_t ptr = 0;             // device address of the first byte
  int64_t allocation_id = -1;   // -1 while free
  ChunkHandle prev = kInvalidChunk;
  ChunkHandle next = kInvalidChunk;  // also the free-list link of a released record
  int bin_num = kNotBinned;          // the bin holding it while free (found there by size, ptr)
  uint64_t buffer_id = 0;            // the trace's buffer id while in use
  uint64_t stream = 0;

  bool in_use() const { return allocation_id != -1; }
};

class ChunkStore {
 public:
  Chunk& at(ChunkHandle h) { return chunks_[h]; }
  const Chunk& at(ChunkHandle h) const { return chunks_[h]; }

  // Pops the most recently released handle, or appends a fresh record. Like
  // TSL's AllocateChunk it resets only allocation_id, bin_num and next.
  ChunkHandle Allocate() {
    ChunkHandle h;
    if (free_head_ != kInvalidChunk) {
      h = free_head_;
      free_head_ = chunks_[h].next;
      --released_;
    } else {
      h = chunks_.size();
      chunks_.emplace_back();
    }
    Chunk& c = chunks_[h];
    c.allocation_id = -1;
    c.bin_num = kNotBinned;
    c.next = kInvalidChunk;
    return h;
  }

  // Pushes `h` on the LIFO free list (the link reuses `next`).
  void Release(ChunkHandle h) {
    Chunk& c = chunks_[h];
    c.allocation_id = -1;
    c.bin_num = kNotBinned;
    c.next = free_head_;
    free_head_ = h;
    ++released_;
  }

  // Records ever created (live + released): the host footprint in chunks.
  uint64_t records() const { return chunks_.size(); }
  uint64_t released() const { return released_; }
  ChunkHandle free_head() const { return free_head_; }
  uint64_t footprint_bytes() const { return chunks_.capacity() * sizeof(Chunk); }

 private:
  std::vector<Chunk> chunks_;
  ChunkHandle free_head_ = kInvalidChunk;
  uint64_t released_ = 0;
};

}  // namespace hbmsim::allocator::bfc

#endif  // HBMSIM_ALLOCATOR_BFC_CHUNKS_H_
