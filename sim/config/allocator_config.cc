#include "sim/config/allocator_config.h"

#include "fmt/format.h"
#include "sim/layer.h"
#include "trace/core/numbers.h"

namespace hbmsim::sim {
namespace {

bool LooksLikeFile(std::string_view arg) {
  auto ends_with = [&](std::string_view s) {
    return arg.size() >= s.size() && arg.substr(arg.size() - s.size()) == s;
  };
  return ends_with(".yaml") || ends_with(".yml") || arg.find('/') != std::string_view::npos;
}

}  // namespace

AllocatorConfig DefaultConfig(const PolicySpec& policy) {
  AllocatorConfig c;
  c.policy = &policy;
  c.options = OptionValues::Defaults(policy.options);
  c.source = "built-in";
  return c;
}

absl::StatusOr<AllocatorConfig> ResolveAllocator(const PolicyRegistry& registry, std::string_view arg) {
  if (const PolicySpec* p = registry.Find(arg)) return DefaultConfig(*p);
  if (LooksLikeFile(arg)) return LoadAllocatorConfigFile(registry, std::string(arg));
  return absl::InvalidArgumentError(fmt::format(
      "--allocator {}: unknown allocator (built-in: {}; or a .yaml config file)", arg, registry.Names()));
}

absl::Status ApplySetOption(AllocatorConfig& config, std::string_view key_value) {
  const size_t eq = key_value.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(fmt::format("--set {}: expected KEY=VALUE", key_value));
  }
  const std::string_view key = key_value.substr(0, eq);
  const std::string_view text = key_value.substr(eq + 1);
  if (key == "bytes_limit") {
    absl::StatusOr<Bytes> b = ParseBytes(text, /*allow_more_units=*/true);
    if (!b.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("--set {}: {}", key_value, std::string(b.status().message())));
    }
    config.bytes_limit = *b;
    return absl::OkStatus();
  }
  const OptionSpec* spec = config.policy->FindOption(key);
  if (spec == nullptr) {
    return absl::InvalidArgumentError(fmt::format("--set {}: unknown option for {} (known: {})", key_value,
                                                  config.policy->name, config.policy->KnownOptions()));
  }
  absl::StatusOr<OptionValue> v = ParseOptionValue(*spec, text);
  if (!v.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("--set {}: {}", key_value, std::string(v.status().message())));
  }
  config.options.Set(key, *std::move(v));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Allocator>> BuildAllocator(const AllocatorConfig& config, Bytes bytes_limit) {
  if (config.policy == nullptr) return absl::InternalError("allocator config without a policy");
  if (!config.policy->factory) {
    return absl::InvalidArgumentError(fmt::format(
        "{} plans from the whole trace: build it from a scenario (MakeAllocatorMaker)", config.policy->name));
  }
  return config.policy->factory(bytes_limit, config.options);
}

}  // namespace hbmsim::sim
