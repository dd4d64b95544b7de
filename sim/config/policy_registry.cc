#include "sim/config/policy_registry.h"

#include <algorithm>

#include "fmt/format.h"
#include "sim/dumps/failure_texts.h"
#include "sim/dumps/stats_text.h"

namespace hbmsim::sim {
namespace {

// The options a row's own advice and decides_as rules name are its own.
absl::Status CheckOwnEdits(const PolicySpec& spec) {
  for (const AdviceRow& row : spec.advice) {
    if (!row.policy.empty()) continue;  // another row's options: CheckAdviceTargets
    for (const OptionEdit& edit : row.sets) {
      if (absl::Status s = spec.CheckEdit(edit); !s.ok()) {
        return absl::InvalidArgumentError(
            fmt::format("policy {}: advice '{}': {}", spec.name, row.how, std::string(s.message())));
      }
    }
  }
  for (const DecidesAsRule& rule : spec.decides_as) {
    for (const OptionEdit* edit : {&rule.when, &rule.as}) {
      if (absl::Status s = spec.CheckEdit(*edit); !s.ok()) {
        return absl::InvalidArgumentError(
            fmt::format("policy {}: decides_as: {}", spec.name, std::string(s.message())));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

const OptionSpec* PolicySpec::FindOption(std::string_view option) const {
  for (const OptionSpec& o : options) {
    if (o.name == option) return &o;
  }
  return nullptr;
}

OptionValues PolicySpec::DecidesAs(OptionValues ran) const {
  for (const DecidesAsRule& rule : decides_as) {
    const OptionValue* now = ran.Find(rule.when.name);
    if (now != nullptr && *now == rule.when.value) ran.Set(rule.as);
  }
  return ran;
}

absl::Status PolicySpec::CheckEdit(const OptionEdit& edit) const {
  const OptionSpec* spec = FindOption(edit.name);
  if (spec == nullptr) {
    return absl::NotFoundError(
        fmt::format("{}: {} has no such option (known: {})", edit.name, name, KnownOptions()));
  }
  // A value the option accepts reads back as itself; one of another type
  // (a handle declared with the wrong type) reads back as something else.
  absl::StatusOr<OptionValue> read = ParseOptionValue(*spec, FormatOptionValue(edit.value));
  if (!read.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {}", edit.Text(), std::string(read.status().message())));
  }
  if (*read != edit.value) {
    return absl::InvalidArgumentError(fmt::format("{}: the value is not of the option's type ({})",
                                                  edit.Text(), OptionTypeName(spec->type)));
  }
  return absl::OkStatus();
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
  for (TraceFormat format : spec.recording.made_formats) {
    if (const PolicySpec* other = MadeFormat(format)) {
      return absl::AlreadyExistsError(fmt::format("policies {} and {} both claim {} recordings", other->name,
                                                  spec.name, TraceFormatName(format)));
    }
  }
  if (absl::Status s = CheckOwnEdits(spec); !s.ok()) return s;
  if (!spec.texts.at_failure) spec.texts.at_failure = GenericFailureText;
  if (!spec.texts.stats) spec.texts.stats = TensorFlowStatsText;
  auto at = std::lower_bound(policies_.begin(), policies_.end(), spec.name,
                             [](const PolicySpec& p, const std::string& n) { return p.name < n; });
  policies_.insert(at, std::move(spec));
  return absl::OkStatus();
}

absl::Status PolicyRegistry::CheckAdviceTargets() const {
  for (const PolicySpec& p : policies_) {
    for (const AdviceRow& row : p.advice) {
      if (row.policy.empty()) continue;
      const PolicySpec* target = Find(row.policy);
      if (target == nullptr) {
        return absl::NotFoundError(fmt::format("policy {}: advice '{}': no policy {} (registered: {})",
                                               p.name, row.how, row.policy, Names()));
      }
      for (const OptionEdit& edit : row.sets) {
        if (absl::Status s = target->CheckEdit(edit); !s.ok()) {
          return absl::InvalidArgumentError(
              fmt::format("policy {}: advice '{}': {}", p.name, row.how, std::string(s.message())));
        }
      }
    }
  }
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

const PolicySpec* PolicyRegistry::MadeFormat(TraceFormat format) const {
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

}  // namespace hbmsim::sim
