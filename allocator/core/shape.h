// The logical shape of a tensor (`shape=bf16[4096,1024]` in a trace), for
// policies that pad to a device layout. Parsing lives here so every reader
// accepts exactly the same spellings.
#ifndef HBMSIM_ALLOCATOR_CORE_SHAPE_H_
#define HBMSIM_ALLOCATOR_CORE_SHAPE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"

namespace hbmsim::allocator {

enum class DType : uint8_t {
  kPred,
  kS4,
  kU4,
  kS8,
  kU8,
  kS16,
  kU16,
  kS32,
  kU32,
  kS64,
  kU64,
  kF8E4M3FN,
  kF8E5M2,
  kF16,
  kBF16,
  kF32,
  kF64,
  kC64,
  kC128,
};

// Storage bits of one element (sub-byte types report 4).
int DTypeBits(DType t);
// The canonical spelling (XLA's: "f32", "bf16", "s8", ...).
std::string_view DTypeName(DType t);

struct TensorShape {
  DType dtype = DType::kF32;
  absl::InlinedVector<uint64_t, 6> dims;  // major to minor, as written

  int rank() const { return static_cast<int>(dims.size()); }
  bool operator==(const TensorShape&) const = default;
};

// Parses `<dtype>[d0,d1,...]` (`f32[]` is a scalar). Accepted dtype spellings:
// XLA's (pred s4 u4 s8 u8 s16 u16 s32 u32 s64 u64 f8e4m3fn f8e5m2 f16 bf16 f32 f64
// c64 c128) and the common aliases bool int8 uint8 int16 int32 int64 fp8 half
// float double. Errors say what was wrong, without a location (the caller adds it).
absl::StatusOr<TensorShape> ParseShape(std::string_view text);

// `bf16[4096,1024]`, the canonical spelling; ParseShape(FormatShape(s)) == s.
std::string FormatShape(const TensorShape& s);

// Unpadded bytes: product of dims times element bits, rounded up to whole bytes.
// Saturates at UINT64_MAX instead of wrapping.
uint64_t UnpaddedBytes(const TensorShape& s);

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_CORE_SHAPE_H_
