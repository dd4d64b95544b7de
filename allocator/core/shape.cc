#include "allocator/core/shape.h"

#include <array>
#include <charconv>
#include <limits>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace hbmsim::allocator {
namespace {

struct DTypeSpelling {
  std::string_view name;
  DType type;
};

// Canonical names first: DTypeName() returns the first spelling of each type.
constexpr std::array<DTypeSpelling, 31> kSpellings = {{
    {"pred", DType::kPred},
    {"s4", DType::kS4},
    {"u4", DType::kU4},
    {"s8", DType::kS8},
    {"u8", DType::kU8},
    {"s16", DType::kS16},
    {"u16", DType::kU16},
    {"s32", DType::kS32},
    {"u32", DType::kU32},
    {"s64", DType::kS64},
    {"u64", DType::kU64},
    {"f8e4m3fn", DType::kF8E4M3FN},
    {"f8e5m2", DType::kF8E5M2},
    {"f16", DType::kF16},
    {"bf16", DType::kBF16},
    {"f32", DType::kF32},
    {"f64", DType::kF64},
    {"c64", DType::kC64},
    {"c128", DType::kC128},
    // Aliases.
    {"bool", DType::kPred},
    {"int8", DType::kS8},
    {"uint8", DType::kU8},
    {"int16", DType::kS16},
    {"int32", DType::kS32},
    {"int64", DType::kS64},
    {"fp8", DType::kF8E4M3FN},
    {"half", DType::kF16},
    {"float", DType::kF32},
    {"double", DType::kF64},
    {"i32", DType::kS32},
    {"i64", DType::kS64},
}};

}  // namespace

int DTypeBits(DType t) {
  switch (t) {
    case DType::kS4:
    case DType::kU4:
      return 4;
    case DType::kPred:
    case DType::kS8:
    case DType::kU8:
    case DType::kF8E4M3FN:
    case DType::kF8E5M2:
      return 8;
    case DType::kS16:
    case DType::kU16:
    case DType::kF16:
    case DType::kBF16:
      return 16;
    case DType::kS32:
    case DType::kU32:
    case DType::kF32:
      return 32;
    case DType::kS64:
    case DType::kU64:
    case DType::kF64:
    case DType::kC64:
      return 64;
    case DType::kC128:
      return 128;
  }
  return 32;
}

std::string_view DTypeName(DType t) {
  for (const auto& s : kSpellings) {
    if (s.type == t) return s.name;
  }
  return "?";
}

absl::StatusOr<TensorShape> ParseShape(std::string_view text) {
  const size_t open = text.find('[');
  if (open == std::string_view::npos || text.empty() || text.back() != ']') {
    return absl::InvalidArgumentError(fmt::format("shape '{}' is not of the form dtype[d0,d1,...]", text));
  }
  TensorShape shape;
  const std::string_view dtype = text.substr(0, open);
  bool known = false;
  for (const auto& s : kSpellings) {
    if (s.name == dtype) {
      shape.dtype = s.type;
      known = true;
      break;
    }
  }
  if (!known) {
    return absl::InvalidArgumentError(fmt::format("unknown dtype '{}' in shape '{}'", dtype, text));
  }
  std::string_view dims = text.substr(open + 1, text.size() - open - 2);
  while (!dims.empty()) {
    const size_t comma = dims.find(',');
    const std::string_view d = dims.substr(0, comma);
    uint64_t v = 0;
    const auto [ptr, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
    if (d.empty() || ec != std::errc() || ptr != d.data() + d.size()) {
      return absl::InvalidArgumentError(
          fmt::format("dimension '{}' in shape '{}' is not an unsigned 64-bit integer", d, text));
    }
    shape.dims.push_back(v);
    if (comma == std::string_view::npos) break;
    dims.remove_prefix(comma + 1);
    if (dims.empty()) {
      return absl::InvalidArgumentError(fmt::format("shape '{}' ends with a comma", text));
    }
  }
  return shape;
}

std::string FormatShape(const TensorShape& s) {
  return fmt::format("{}[{}]", DTypeName(s.dtype), fmt::join(s.dims, ","));
}

uint64_t UnpaddedBytes(const TensorShape& s) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t elements = 1;
  for (uint64_t d : s.dims) {
    if (d != 0 && elements > kMax / d) return kMax;
    elements *= d;
  }
  const uint64_t bits = static_cast<uint64_t>(DTypeBits(s.dtype));
  if (elements > (kMax - 7) / bits) return kMax;
  return (elements * bits + 7) / 8;
}

}  // namespace hbmsim::allocator
