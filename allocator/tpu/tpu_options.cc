#include "allocator/tpu/tpu_options.h"

#include "fmt/format.h"

namespace hbmsim::allocator {

std::string_view EvictionOrderName(EvictionOrder o) {
  return o == EvictionOrder::kLru ? "lru" : "largest_first";
}

std::optional<EvictionOrder> ParseEvictionOrder(std::string_view name) {
  if (name == "lru") return EvictionOrder::kLru;
  if (name == "largest_first") return EvictionOrder::kLargestFirst;
  return std::nullopt;
}

absl::Status ValidateTpuOptions(const TpuOptions& o) {
  if (o.granule.is_zero()) return absl::InvalidArgumentError("granule must be at least 1 byte");
  if (o.hbm_bytes < o.granule) {
    return absl::InvalidArgumentError(fmt::format("hbm_bytes ({}) must hold at least one granule ({})",
                                                  o.hbm_bytes.value(), o.granule.value()));
  }
  return absl::OkStatus();
}

}  // namespace hbmsim::allocator
