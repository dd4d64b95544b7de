#include "allocator/tpu/tpu_padding.h"

#include <algorithm>

namespace hbmsim::allocator {
namespace {

constexpr uint64_t kLaneTile = 128;     // minor-most dimension
constexpr uint64_t kVectorTile = 1024;  // rank-1 arrays
constexpr uint64_t kSublaneTile32 = 8;  // second-minor dimension, 32-bit types

uint64_t RoundUpSaturating(uint64_t v, uint64_t multiple) { return Bytes(v).RoundUp(multiple).value(); }

uint64_t MulSaturating(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return Bytes::Max().value();
  return product;
}

// Element count times element bits, rounded up to whole bytes.
Bytes ElementsToBytes(uint64_t elements, int bits) {
  const uint64_t total_bits = MulSaturating(elements, static_cast<uint64_t>(bits));
  if (total_bits == Bytes::Max().value()) return Bytes::Max();
  return Bytes(total_bits / 8 + (total_bits % 8 != 0 ? 1 : 0));
}

}  // namespace

uint64_t SublaneTile(DType dtype) {
  const int bits = DTypeBits(dtype);
  // Narrow types pack 32/bits elements per sublane: bf16 (2,1), 8-bit (4,1).
  return bits < 32 ? kSublaneTile32 * (32 / static_cast<uint64_t>(bits)) : kSublaneTile32;
}

Bytes TiledLayoutBytes(const TensorShape& shape) {
  const int rank = shape.rank();
  if (rank == 0) return Bytes(0);
  uint64_t elements = 1;
  for (int d = 0; d < rank; ++d) {
    uint64_t dim = shape.dims[d];
    if (rank == 1) {
      dim = RoundUpSaturating(dim, kVectorTile);
    } else if (d == rank - 1) {
      dim = RoundUpSaturating(dim, kLaneTile);
    } else if (d == rank - 2) {
      dim = RoundUpSaturating(dim, SublaneTile(shape.dtype));
    }
    elements = MulSaturating(elements, dim);
  }
  return ElementsToBytes(elements, DTypeBits(shape.dtype));
}

Bytes TiledBufferBytes(Bytes requested, const TensorShape& shape, Bytes granule) {
  const Bytes layout = shape.rank() == 0 ? granule : TiledLayoutBytes(shape);
  return RoundUpToGranule(std::max(requested, layout), std::max<uint64_t>(granule.value(), 1));
}

}  // namespace hbmsim::allocator
