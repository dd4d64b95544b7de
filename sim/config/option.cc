#include "sim/config/option.h"

#include <charconv>
#include <cmath>

#include "fmt/format.h"
#include "sim/layer.h"
#include "trace/core/numbers.h"

namespace hbmsim::sim {
namespace {

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

absl::StatusOr<OptionValue> ParseBool(std::string_view text) {
  if (text == "true") return OptionValue(true);
  if (text == "false") return OptionValue(false);
  return Invalid("expected true or false");
}

absl::StatusOr<OptionValue> ParseInt(std::string_view text) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return Invalid(fmt::format("expected an integer, got '{}'", text));
  }
  return OptionValue(v);
}

absl::StatusOr<OptionValue> ParseDouble(std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
    return Invalid(fmt::format("expected a number, got '{}'", text));
  }
  return OptionValue(v);
}

absl::StatusOr<OptionValue> ParseEnum(const OptionSpec& spec, std::string_view text) {
  for (const std::string& c : spec.choices) {
    if (c == text) return OptionValue(c);
  }
  return Invalid(fmt::format("expected one of {}, got '{}'", fmt::join(spec.choices, ", "), text));
}

absl::StatusOr<OptionValue> ParseTyped(const OptionSpec& spec, std::string_view text) {
  switch (spec.type) {
    case OptionType::kBool:
      return ParseBool(text);
    case OptionType::kInt:
      return ParseInt(text);
    case OptionType::kBytes: {
      absl::StatusOr<Bytes> b = ParseBytes(text, /*allow_more_units=*/true);
      if (!b.ok()) return b.status();
      return OptionValue(*b);
    }
    case OptionType::kDouble:
      return ParseDouble(text);
    case OptionType::kString:
      return OptionValue(std::string(text));
    case OptionType::kEnum:
      return ParseEnum(spec, text);
  }
  return Invalid("unknown option type");
}

}  // namespace

std::string_view OptionTypeName(OptionType t) {
  switch (t) {
    case OptionType::kBool:
      return "bool";
    case OptionType::kInt:
      return "int";
    case OptionType::kBytes:
      return "bytes";
    case OptionType::kDouble:
      return "double";
    case OptionType::kString:
      return "string";
    case OptionType::kEnum:
      return "enum";
  }
  return "?";
}

absl::StatusOr<OptionValue> ParseOptionValue(const OptionSpec& spec, std::string_view text) {
  absl::StatusOr<OptionValue> v = ParseTyped(spec, text);
  if (!v.ok() || !spec.check) return v;
  std::string problem = spec.check(*v);
  if (!problem.empty()) return Invalid(std::move(problem));
  return v;
}

std::string FormatOptionValue(const OptionValue& v) {
  struct Formatter {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t i) const { return fmt::format("{}", i); }
    std::string operator()(Bytes b) const { return fmt::format("{}", b.value()); }
    std::string operator()(double d) const { return fmt::format("{}", d); }
    std::string operator()(const std::string& s) const { return s; }
  };
  return std::visit(Formatter{}, v);
}

OptionValues OptionValues::Defaults(const std::vector<OptionSpec>& specs) {
  OptionValues out;
  for (const OptionSpec& spec : specs) {
    absl::StatusOr<OptionValue> v = ParseOptionValue(spec, spec.default_text);
    out.entries_.emplace_back(spec.name, v.ok() ? *v : OptionValue(false));
  }
  return out;
}

bool OptionValues::Set(std::string_view name, OptionValue v) {
  for (auto& [k, value] : entries_) {
    if (k == name) {
      value = std::move(v);
      return true;
    }
  }
  return false;
}

const OptionValue* OptionValues::Find(std::string_view name) const {
  for (const auto& [k, value] : entries_) {
    if (k == name) return &value;
  }
  return nullptr;
}

absl::Status OptionValues::UnknownOption(std::string_view name) const {
  std::string known;
  for (const auto& [k, value] : entries_) known += (known.empty() ? "" : ", ") + k;
  return absl::NotFoundError(fmt::format("no option {} (known: {})", name, known.empty() ? "none" : known));
}

absl::Status OptionValues::WrongType(std::string_view name) const {
  return absl::InvalidArgumentError(fmt::format("option {} holds another type", name));
}

}  // namespace hbmsim::sim
