// Typed allocator options, as the sim layer sees them: a spec per option (name,
// type, default, help) and the parsed values. The same parser serves `--set
// KEY=VALUE` and YAML configs, so both accept exactly the same spellings; its
// messages say what is wrong and the caller adds where (option or file:line).
#ifndef HBMSIM_SIM_CONFIG_OPTION_H_
#define HBMSIM_SIM_CONFIG_OPTION_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "allocator/core/units.h"
#include "sim/layer.h"

namespace hbmsim::sim {

enum class OptionType : uint8_t { kBool, kInt, kBytes, kDouble, kString, kEnum };
std::string_view OptionTypeName(OptionType t);  // "bool", "int", "bytes", ...

// kEnum values are held as the chosen spelling (std::string).
using OptionValue = std::variant<bool, int64_t, Bytes, double, std::string>;

struct OptionSpec {
  std::string name;
  OptionType type = OptionType::kBool;
  std::string default_text;  // the default, spelled as on the command line
  std::string help;
  std::vector<std::string> choices;  // kEnum only
  // A constraint beyond the type; returns what is wrong ("must be >= 0 and < 1")
  // or an empty string. May be empty (no constraint).
  std::function<std::string(const OptionValue&)> check;
};

// Parses `text` as a value of `spec`. Accepted spellings: bool `true`/`false`;
// int a decimal int64; bytes a decimal count or units (KiB..PiB, KB..TB);
// double a finite decimal; enum one of the choices.
absl::StatusOr<OptionValue> ParseOptionValue(const OptionSpec& spec, std::string_view text);

// The value spelled as ParseOptionValue accepts it (bytes as plain decimal).
std::string FormatOptionValue(const OptionValue& v);

// A typed handle on one option: its name, spelled once where the policy's row
// declares it (OptionTable::Add takes the handle), and the type its values
// hold: bool, int64_t, Bytes, double, or std::string (string and enum
// options). Advice, decides_as and recorded settings refer to the option by
// this handle: the name is never re-spelled, a wrongly typed value does not
// compile; Register checks that advice and decides_as name declared options,
// tests/sim/config/option_handles_test.cc that the recorded settings do.
//
//   constexpr OptionName<bool> kAllowGrowth{"allow_growth"};
template <typename T>
struct OptionName {
  std::string_view name;
};

// One option given one value (`allow_growth=true`): an advice row's setting,
// a recorded setting, a decides_as rule.
struct OptionEdit {
  // The value's type is the handle's: {kAllowGrowth, true}, {kMaxSplitSize, Bytes::MiB(128)}.
  template <typename T>
  OptionEdit(OptionName<T> option, std::type_identity_t<T> v) : name(option.name), value(std::move(v)) {}

  // "allow_growth=true", as --set takes it.
  std::string Text() const { return std::string(name) + "=" + FormatOptionValue(value); }

  std::string_view name;  // a handle's, so a string literal that outlives the edit
  OptionValue value;
};

// The effective value of every option of one policy, in the policy's spec
// order (so reports are deterministic). Built from the defaults, then edited.
class OptionValues {
 public:
  OptionValues() = default;
  // Every option at its default. The defaults must parse (checked by tests).
  static OptionValues Defaults(const std::vector<OptionSpec>& specs);

  // Replaces the value of `name`; false if the policy has no such option.
  bool Set(std::string_view name, OptionValue v);
  bool Set(const OptionEdit& edit) { return Set(edit.name, edit.value); }

  // The value of `name` as a T (bool, int64_t, Bytes, double, std::string):
  // an unknown name or another type is an error naming the option. Policies
  // never need this (OptionTable writes their typed options); it is for the
  // few places outside a policy that read one option.
  template <typename T>
  absl::StatusOr<T> Get(std::string_view name) const {
    const OptionValue* v = Find(name);
    if (v == nullptr) return UnknownOption(name);
    if (!std::holds_alternative<T>(*v)) return WrongType(name);
    return std::get<T>(*v);
  }

  template <typename T>
  absl::StatusOr<T> Get(OptionName<T> option) const {
    return Get<T>(option.name);
  }

  const std::vector<std::pair<std::string, OptionValue>>& entries() const { return entries_; }
  // The value of `name`, or nullptr if the policy has no such option.
  const OptionValue* Find(std::string_view name) const;

 private:
  absl::Status UnknownOption(std::string_view name) const;
  absl::Status WrongType(std::string_view name) const;
  std::vector<std::pair<std::string, OptionValue>> entries_;
};

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_CONFIG_OPTION_H_
