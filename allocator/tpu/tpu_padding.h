// The TPU layout's padded size of a buffer: pure functions, no state.
//
// Rules (the model of issue 4; the tile sizes are Google's [doc], E1000 and
// the T(8,128)(2,1)/(4,1) layouts quoted in tpu-and-xla.md §1.4):
//   rank >= 2  last dim        -> multiple of 128
//              second-to-last  -> multiple of 8 * (32 / bits) for types
//                                 narrower than 32 bits, else 8
//                                 (f32 8, bf16/f16 16, s8/fp8 32, s4 64)
//   rank 1     elements        -> multiple of 1024
//   rank 0     one granule
// then the byte count is rounded up to the granule. Every product saturates
// at Bytes::Max(), so an absurd shape fails as oom instead of wrapping.
#ifndef HBMSIM_ALLOCATOR_TPU_TPU_PADDING_H_
#define HBMSIM_ALLOCATOR_TPU_TPU_PADDING_H_

#include <cstdint>

#include "allocator/core/shape.h"
#include "allocator/core/units.h"

namespace hbmsim::allocator {

// Tile of the second-to-last dimension for `dtype`.
uint64_t SublaneTile(DType dtype);

// Bytes of `shape` in the TPU tiled layout, before granule rounding.
// A scalar reports zero here; TpuBufferBytes gives it one granule.
Bytes TiledLayoutBytes(const TensorShape& shape);

// bytes.RoundUp(granule), granule > 0. RoundUp divides, and a 64-bit division
// is the slowest instruction of an allocation (tens of cycles); granules are
// powers of two in practice (512 B by default), where a mask gives the same
// remainder. (Tested by hand, not std::has_single_bit: without -mpopcnt that
// is a libgcc call.)
inline Bytes RoundUpToGranule(Bytes bytes, uint64_t granule) {
  const uint64_t v = bytes.value();
  const uint64_t rem = (granule & (granule - 1)) == 0 ? v & (granule - 1) : v % granule;
  if (rem == 0) return bytes;
  const uint64_t pad = granule - rem;
  return Bytes(v > Bytes::Max().value() - pad ? Bytes::Max().value() : v + pad);  // saturates as RoundUp
}

// The bytes a buffer takes: with tile padding and a shape, the larger of the
// tiled layout and the caller's bytes (a trace whose size disagrees with its
// shape is never shrunk); otherwise the caller's bytes. Rounded to `granule`.
// Inline, with the shapeless case (most traces) first: it is on every allocation.
Bytes TiledBufferBytes(Bytes requested, const TensorShape& shape, Bytes granule);  // the case with a shape
inline Bytes TpuBufferBytes(Bytes requested, const TensorShape* shape, bool tile_padding, Bytes granule) {
  if (tile_padding && shape != nullptr) return TiledBufferBytes(requested, *shape, granule);
  return RoundUpToGranule(requested, granule.value() == 0 ? 1 : granule.value());
}

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_TPU_TPU_PADDING_H_
