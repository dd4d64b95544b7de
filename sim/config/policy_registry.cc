#include "sim/config/policy_registry.h"

#include <algorithm>

#include "fmt/format.h"
#include "sim/dumps/failure_texts.h"
#include "sim/dumps/stats_text.h"

namespace hbmsim {

const OptionSpec* PolicySpec::FindOption(std::string_view option) const {
  for (const OptionSpec& o : options) {
    if (o.name == option) return &o;
  }
  return nullptr;
}

std::string PolicySpec::KnownOptions() const {
  std::string out;
  for (const OptionSpec& o : options) {
    if (!out.empty()) out += ", ";
    out += o.name;
  }
  return out.empty() ? "none" : out;
}

absl::Status PolicyRegistry::Register(PolicySpec spec) {
  if (Find(spec.name) != nullptr) {
    return absl::AlreadyExistsError(fmt::format("policy {} registered twice", spec.name));
  }
  for (std::string_view format : spec.recording.made_formats) {
    if (const PolicySpec* other = MadeFormat(format)) {
      return absl::AlreadyExistsError(fmt::format("policies {} and {} both claim {} recordings", other->name,
                                                  spec.name, format));
    }
  }
  if (!spec.texts.at_failure) spec.texts.at_failure = GenericFailureText;
  if (!spec.texts.stats) spec.texts.stats = TensorFlowStatsText;
  auto at = std::lower_bound(policies_.begin(), policies_.end(), spec.name,
                             [](const PolicySpec& p, const std::string& n) { return p.name < n; });
  policies_.insert(at, std::move(spec));
  return absl::OkStatus();
}

const PolicySpec* PolicyRegistry::Find(std::string_view name) const {
  for (const PolicySpec& p : policies_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const PolicySpec* PolicyRegistry::LiveBytesBound() const {
  for (const PolicySpec& p : policies_) {
    if (p.bounds_live_bytes) return &p;
  }
  return nullptr;
}

std::vector<const PolicySpec*> PolicyRegistry::RuntimePolicies() const {
  std::vector<const PolicySpec*> out;
  for (const PolicySpec& p : policies_) {
    if (p.models_a_runtime) out.push_back(&p);
  }
  return out;
}

const PolicySpec* PolicyRegistry::MadeFormat(std::string_view format) const {
  for (const PolicySpec& p : policies_) {
    if (std::find(p.recording.made_formats.begin(), p.recording.made_formats.end(), format) !=
        p.recording.made_formats.end()) {
      return &p;
    }
  }
  return nullptr;
}

std::string PolicyRegistry::Names() const {
  std::string out;
  for (const PolicySpec& p : policies_) {
    if (!out.empty()) out += ", ";
    out += p.name;
  }
  return out;
}

}  // namespace hbmsim
