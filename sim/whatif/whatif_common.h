// Pieces the `size` and `compare` commands share: reading a trace once into
// its compact form, and resolving an allocator argument with its options.
#ifndef HBMSIM_SIM_WHATIF_WHATIF_COMMON_H_
#define HBMSIM_SIM_WHATIF_WHATIF_COMMON_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "sim/config/allocator_config.h"

namespace hbmsim {

// `NAME|FILE.yaml` plus `KEY=VALUE` edits; errors name the allocator argument.
absl::StatusOr<AllocatorConfig> ResolveWithSets(std::string_view allocator,
                                                const std::vector<std::string>& sets);

// `bfc,tpu,paged:page_size=64KiB`: comma-separated NAME[:KEY=VALUE...].
absl::StatusOr<std::vector<AllocatorConfig>> ParseAllocatorList(std::string_view list);

// {"name": ..., "options": {...}} in spec order.
nlohmann::ordered_json AllocatorJson(const AllocatorConfig& config);

}  // namespace hbmsim

#endif  // HBMSIM_SIM_WHATIF_WHATIF_COMMON_H_
