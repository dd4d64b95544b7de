// The allocator's state when the recording began, inferred from the
// recording itself. A profile starts mid-run: chunks allocated before it are
// in use, and a BFC replay from an empty pool would place everything
// elsewhere. What the records tell, and what is inferred from it:
//
//   bytes in use before    bytes_allocated of the first record minus (plus,
//                          for a deallocation) its chunk size            exact
//   known live chunks      deallocations of addresses never allocated in the
//                          recording: address and chunk size             exact
//   unknown live bytes U   bytes in use before − Σ known live chunks     exact total
//   where U lies           NOT recorded. Inferred: the address ranges the
//                          recording never touches between its lowest and
//                          highest touched address are taken as live chunks
//                          (whole gaps, lowest first, while U lasts: a free gap
//                          would most likely have been reused by best fit);
//                          what is left of U is one chunk just below the
//                          lowest touched address
//   region base            the lowest inferred chunk's address
//   limit                  bytes_allocated + bytes_available + bytes_reserved
//                          (bytes_available = limit − reserved − in use)  exact
//   free chunks            every gap not taken as live: BFC keeps neighbouring
//                          free chunks merged, so the free layout follows
//   pool at the start P    from the fragmentation readings: between two records
//                          f·(P − in_use) (the free bytes outside the largest
//                          chunk) stays put or moves by the chunk, which gives one
//                          P per pair and hypothesis; the most common value (MiB
//                          buckets, at least 3 pairs) wins. P within 1% of the
//                          limit: one region of the whole limit (allow_growth off,
//                          the layout above). Less: regions grown on demand
//                          (allow_growth), laid out as below
//
// Top-down devices: when every touched address lies below the limit, the
// addresses are offsets into the device's one region and buffers are placed
// from its top (a TPU's HBM: best fit, top end of the block). The space
// between the highest touched address and the limit is then a gap like the
// others, gaps are taken for U from the top down, no regions are grown, and
// the trace lays the chunks out from the limit downward (profile_trace.h).
//
// Grown regions (allow_growth, P < limit): each cluster of touched addresses
// lies in its own region of 2 MiB·2^k bytes (BFC's doubling), the smallest
// that spans it, starting at the cluster's first address (clusters whose
// regions would overlap are one cluster). Untouched space inside a region is
// live while U lasts; the space after a cluster's last chunk only when a
// chunk ending there was handed out unsplit and larger than its request (so
// the free chunk it came from ended there). What is left of U is one chunk in
// a region of its own that the recording never touches. The sizes must be
// ones BFC's doubling makes (region_doubling.h): placed regions are widened
// and the free untouched regions chosen until they are, and U's rest then
// lies in a region of its own or at the bottom of an untouched one. Where the
// untouched regions lie is not known: they get no base.
//
//   region base                 lowest touched                    highest
//   │ unknown (U − gaps) │ known │ gap→unknown │ free │ known │ ... │ free tail ...
//
// Not knowable from a profile: the sizes and addresses of the individual
// chunks that make up U (they are never freed in the recording, so only
// their total matters to it), the pool's size when it is not the whole limit
// (allow_growth), regions other than the one holding the recording's
// addresses, and the allocation ids (so TF's "next H" handle numbers).
#ifndef HBMSIM_TRACE_XPLANE_START_STATE_H_
#define HBMSIM_TRACE_XPLANE_START_STATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trace/xplane/profile.h"

namespace hbmsim::trace::xplane {

enum class StartChunkKind : uint8_t {
  kKnown,    // freed in the recording: address and size recorded
  kUnknown,  // inferred live bytes (part of U)
  kHole,     // inferred free
};

struct StartChunk {
  uint64_t addr = 0;
  int64_t size = 0;
  StartChunkKind kind = StartChunkKind::kKnown;
  size_t freed_by = 0;  // kKnown: the index of the record that frees it
};

// One record made whole: sizes that the record left out are filled in.
struct ResolvedRecord {
  int64_t chunk_bytes = 0;      // allocation_bytes, else inferred (see chunk_from)
  int64_t requested_bytes = 0;  // requested_bytes, else the chunk size
  std::string chunk_from;       // "" when recorded; else how it was inferred
  bool preexisting = false;     // a deallocation of a chunk allocated before the recording
};

struct StartRegion {
  std::optional<uint64_t> base;  // none: a region the recording never touches
  int64_t size = 0;
  int64_t unknown_live = 0;  // untouched regions: live bytes at its bottom, the rest free
  // A chunk handed out whole, larger than its request, ends at the region's
  // end: the region is exactly this size and is never widened.
  bool end_recorded = false;
};

struct StartState {
  int64_t bytes_in_use_before = 0;
  int64_t unknown_bytes = 0;  // U
  std::optional<int64_t> limit;
  std::optional<int64_t> peak_before;  // peak_bytes_in_use when the recording began
  uint64_t lowest_touched = 0;
  uint64_t highest_touched = 0;          // exclusive
  std::optional<int64_t> pool_estimate;  // P, when the fragmentation readings tell it
  bool grown = false;                    // regions grown on demand: see above
  // Every address lies below the limit: they are offsets into the device's
  // one region, buffers placed from its top (a TPU's HBM). The gap above the
  // highest touched address counts as a gap; no regions are grown.
  bool top_down = false;
  std::optional<int64_t> reserved_before;  // top_down: bytes_reserved (programs) at the first record
  std::vector<StartRegion> regions;      // grown only: in build order (size, then address)
  // grown only: the first region's size the pool implies when it is not REF's
  // 2 MiB (a pool of an odd number of MiB: 1 MiB, region_doubling.h)
  std::optional<int64_t> first_region;
  int64_t unknown_elsewhere = 0;         // grown only: U in regions the recording never touches
  std::vector<StartChunk> chunks;        // address order, tiling [base, highest touched) partly
  std::vector<ResolvedRecord> records;   // one per record of the allocator
  std::vector<std::string> notes;        // each inference that was needed, one line

  uint64_t base() const { return chunks.empty() ? lowest_touched : chunks.front().addr; }
};

// Walks one allocator's records. Errors name the record: an allocation at
// an address that is still allocated, a deallocation of an address the
// recording allocated and already freed, a record without an address.
absl::StatusOr<StartState> InferStartState(const AllocatorRecording& rec, std::string_view source);

}  // namespace hbmsim::trace::xplane

#endif  // HBMSIM_TRACE_XPLANE_START_STATE_H_
