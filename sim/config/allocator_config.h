// An allocator configuration as the user gave it: a built-in policy name or a
// YAML file, edited by `--set KEY=VALUE`, plus an optional byte limit. The
// policy itself never sees any of this: BuildAllocator hands its factory the
// typed values.
//
// YAML layout (the config tree mirrors the component tree; `impl:` picks the
// implementation):
//
//   allocator:
//     impl: bfc
//     bytes_limit: 16GiB        # optional; --bytes-limit overrides it
//     garbage_collection: true  # any option of the chosen policy
//
// Every error names where it comes from: `file.yaml:4: allocator.allow_grwth:
// unknown option for bfc (known: ...)`, `--set allow_growth=maybe: expected
// true or false`.
#ifndef HBMSIM_SIM_CONFIG_ALLOCATOR_CONFIG_H_
#define HBMSIM_SIM_CONFIG_ALLOCATOR_CONFIG_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "allocator/core/allocator.h"
#include "sim/config/option.h"
#include "sim/config/policy_registry.h"
#include "sim/layer.h"

namespace hbmsim::sim {

struct AllocatorConfig {
  const PolicySpec* policy = nullptr;  // owned by the registry
  OptionValues options;                // every option, defaults filled in
  std::optional<Bytes> bytes_limit;    // from the YAML file, if it had one
  std::string source;                  // "built-in" or the YAML path
};

// Refuse YAML inputs beyond these before yaml-cpp (which recurses) sees them.
inline constexpr uint64_t kMaxConfigFileBytes = 4 << 20;
inline constexpr int kMaxConfigNesting = 64;

// `arg` is a built-in policy name, or a path to a YAML config (it ends in
// .yaml/.yml or contains a '/').
absl::StatusOr<AllocatorConfig> ResolveAllocator(const PolicyRegistry& registry, std::string_view arg);

// A config with every option at its default.
AllocatorConfig DefaultConfig(const PolicySpec& policy);

// Loads a YAML config strictly: unknown keys, duplicate keys and malformed
// values are errors naming the file:line and the YAML path.
absl::StatusOr<AllocatorConfig> LoadAllocatorConfigFile(const PolicyRegistry& registry,
                                                        const std::string& path);
// The same from text already read (`name` is used in messages).
absl::StatusOr<AllocatorConfig> ParseAllocatorConfig(const PolicyRegistry& registry, std::string_view text,
                                                     const std::string& name);

// Applies one `--set KEY=VALUE`. `bytes_limit` is accepted as a key too.
absl::Status ApplySetOption(AllocatorConfig& config, std::string_view key_value);

// Builds the policy with `bytes_limit` (already resolved by the caller).
absl::StatusOr<std::unique_ptr<Allocator>> BuildAllocator(const AllocatorConfig& config, Bytes bytes_limit);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_CONFIG_ALLOCATOR_CONFIG_H_
