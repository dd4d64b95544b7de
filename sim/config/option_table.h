// A policy's options declared once each, bound to the member of the policy's
// typed Options struct they set. One declaration gives everything else:
//
//   constexpr OptionName<bool> kAllowGrowth{"allow_growth"};  // the handle (option.h)
//   OptionTable<BfcOptions> t;
//   t.Limit(&BfcOptions::memory_limit);                       // takes the byte limit
//   t.Add(kAllowGrowth, &BfcOptions::allow_growth, "...");    // bool, default false
//
//   name     the handle's, written once; the factory and the reports never
//            spell it, the row's advice, decides_as and recorded settings use
//            the handle
//   type     from the member, and the handle's must match it (a compile error
//            otherwise): bool -> bool, int/int64_t -> int, double -> double,
//            Bytes/uint64_t -> bytes (a uint64_t option is always a size),
//            std::string -> string, std::optional<double> -> double (0 = unset),
//            an enum -> enum (AddEnum, with its names)
//   default  the member's value in a default-constructed Options
//   order    declaration order, which is the order reports list options in
//
// Build() writes each value into its member (an option declared with AddEditor,
// like torch's alloc_conf, edits the struct after every member is set), and
// Effective() reads the members back, so reports show the options that really
// ran, whichever of YAML, --set, alloc_conf or a recording set them.
#ifndef HBMSIM_SIM_CONFIG_OPTION_TABLE_H_
#define HBMSIM_SIM_CONFIG_OPTION_TABLE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "allocator/core/units.h"
#include "fmt/format.h"
#include "sim/config/option.h"
#include "sim/layer.h"

namespace hbmsim::sim {

using OptionCheck = std::function<std::string(const OptionValue&)>;

// How a member's type is an option: its OptionType, the OptionValue
// alternative its values are (`Value`, the type of its OptionName handle) and
// the two conversions.
template <typename M>
struct MemberCodec;

template <>
struct MemberCodec<bool> {
  static constexpr OptionType kType = OptionType::kBool;
  using Value = bool;
  static OptionValue Read(bool m) { return m; }
  static void Write(const OptionValue& v, bool& m) { m = std::get<bool>(v); }
};
template <>
struct MemberCodec<int64_t> {
  static constexpr OptionType kType = OptionType::kInt;
  using Value = int64_t;
  static OptionValue Read(int64_t m) { return m; }
  static void Write(const OptionValue& v, int64_t& m) { m = std::get<int64_t>(v); }
};
template <>
struct MemberCodec<int> {
  static constexpr OptionType kType = OptionType::kInt;
  using Value = int64_t;
  static OptionValue Read(int m) { return int64_t{m}; }
  // Values outside int's range are refused by the option's range check.
  static void Write(const OptionValue& v, int& m) { m = static_cast<int>(std::get<int64_t>(v)); }
};
template <>
struct MemberCodec<double> {
  static constexpr OptionType kType = OptionType::kDouble;
  using Value = double;
  static OptionValue Read(double m) { return m; }
  static void Write(const OptionValue& v, double& m) { m = std::get<double>(v); }
};
template <>
struct MemberCodec<Bytes> {
  static constexpr OptionType kType = OptionType::kBytes;
  using Value = Bytes;
  static OptionValue Read(Bytes m) { return m; }
  static void Write(const OptionValue& v, Bytes& m) { m = std::get<Bytes>(v); }
};
template <>
struct MemberCodec<uint64_t> {
  static constexpr OptionType kType = OptionType::kBytes;
  using Value = Bytes;
  static OptionValue Read(uint64_t m) { return Bytes(m); }
  static void Write(const OptionValue& v, uint64_t& m) { m = std::get<Bytes>(v).value(); }
};
template <>
struct MemberCodec<std::string> {
  static constexpr OptionType kType = OptionType::kString;
  using Value = std::string;
  static OptionValue Read(const std::string& m) { return m; }
  static void Write(const OptionValue& v, std::string& m) { m = std::get<std::string>(v); }
};
// Unset is spelled 0 (torch's per_process_memory_fraction).
template <>
struct MemberCodec<std::optional<double>> {
  static constexpr OptionType kType = OptionType::kDouble;
  using Value = double;
  static OptionValue Read(const std::optional<double>& m) { return m.value_or(0.0); }
  static void Write(const OptionValue& v, std::optional<double>& m) {
    const double d = std::get<double>(v);
    m = d > 0 ? std::optional<double>(d) : std::nullopt;
  }
};

// "must be an int between -2147483648 and 2147483647", for int members.
std::string IntRangeProblem(const OptionValue& v);

// "must be at least 1 byte", for sizes and alignments where 0 means nothing.
std::string AtLeastOneByte(const OptionValue& v);

template <typename Options>
class OptionTable {
 public:
  using Editor = std::function<absl::Status(const OptionValue&, Options&)>;

  // The member the byte limit (--bytes-limit, YAML bytes_limit) is written to.
  void Limit(Bytes Options::*member) { limit_ = member; }

  template <typename V, typename M>
  void Add(OptionName<V> option, M Options::*member, std::string help, OptionCheck check = {}) {
    using Codec = MemberCodec<M>;
    static_assert(std::is_same_v<V, typename Codec::Value>,
                  "the handle's type is not the member's option type");
    if constexpr (std::is_same_v<M, int>) {
      if (!check) check = IntRangeProblem;
    }
    Declare(
        option, Codec::kType, std::move(help), {}, std::move(check),
        [member](const OptionValue& v, Options& o) { Codec::Write(v, o.*member); },
        [member](const Options& o) { return Codec::Read(o.*member); });
  }

  // A size member where the option's 0 stands for `zero_means` (torch's
  // max_split_size: 0 on the command line, SIZE_MAX in the struct).
  void AddZeroMeans(OptionName<Bytes> option, Bytes Options::*member, Bytes zero_means, std::string help) {
    Declare(
        option, OptionType::kBytes, std::move(help), {}, {},
        [member, zero_means](const OptionValue& v, Options& o) {
          const Bytes b = std::get<Bytes>(v);
          o.*member = b.is_zero() ? zero_means : b;
        },
        [member, zero_means](const Options& o) {
          return OptionValue(o.*member == zero_means ? Bytes() : o.*member);
        });
  }

  // An enum member, spelled by `name_of`; `values` lists every choice.
  template <typename E>
  void AddEnum(OptionName<std::string> option, E Options::*member, std::string help, std::vector<E> values,
               std::string_view (*name_of)(E)) {
    std::vector<std::string> choices;
    for (E e : values) choices.emplace_back(name_of(e));
    Declare(
        option, OptionType::kEnum, std::move(help), choices, {},
        [member, values, name_of](const OptionValue& v, Options& o) {
          for (E e : values) {
            if (name_of(e) == std::get<std::string>(v)) o.*member = e;
          }
        },
        [member, name_of](const Options& o) { return OptionValue(std::string(name_of(o.*member))); });
  }

  // An option with no member of its own that edits the struct after every
  // member option is set (torch's alloc_conf: the keys it names win). Its
  // default is the empty string; the reports show the text as given.
  void AddEditor(OptionName<std::string> option, std::string help, Editor edit) {
    Declare(option, OptionType::kString, std::move(help), {}, {}, {}, {});
    bindings_.back().edit = std::move(edit);
  }

  // The specs as the parsers see them, in declaration order.
  std::vector<OptionSpec> Specs() const {
    std::vector<OptionSpec> out;
    for (const Binding& b : bindings_) out.push_back(b.spec);
    return out;
  }

  // The typed options `values` (every option of this table) stand for.
  absl::StatusOr<Options> Build(Bytes bytes_limit, const OptionValues& values) const {
    Options o;
    if (limit_ != nullptr) o.*limit_ = bytes_limit;
    for (const Binding& b : bindings_) {
      const OptionValue* v = values.Find(b.spec.name);
      if (v == nullptr) return absl::InternalError(fmt::format("option {} has no value", b.spec.name));
      if (b.write) b.write(*v, o);
    }
    for (const Binding& b : bindings_) {
      if (!b.edit) continue;
      if (absl::Status s = b.edit(*values.Find(b.spec.name), o); !s.ok()) {
        return absl::InvalidArgumentError(fmt::format("{}: {}", b.spec.name, std::string(s.message())));
      }
    }
    return o;
  }

  // What ran: every member read back from the options `values` build; an
  // editor option keeps its text.
  absl::StatusOr<OptionValues> Effective(const OptionValues& values) const {
    absl::StatusOr<Options> o = Build(Bytes(), values);
    if (!o.ok()) return o.status();
    OptionValues out = values;
    for (const Binding& b : bindings_) {
      if (b.read) (void)out.Set(b.spec.name, b.read(*o));
    }
    return out;
  }

 private:
  struct Binding {
    OptionSpec spec;
    std::function<void(const OptionValue&, Options&)> write;
    std::function<OptionValue(const Options&)> read;
    Editor edit;
  };

  template <typename V>
  void Declare(OptionName<V> option, OptionType type, std::string help, std::vector<std::string> choices,
               OptionCheck check, std::function<void(const OptionValue&, Options&)> write,
               std::function<OptionValue(const Options&)> read) {
    const std::string default_text = read ? FormatOptionValue(read(Options{})) : "";
    bindings_.push_back({OptionSpec{std::string(option.name), type, default_text, std::move(help),
                                    std::move(choices), std::move(check)},
                         std::move(write),
                         std::move(read),
                         {}});
  }

  Bytes Options::*limit_ = nullptr;
  std::vector<Binding> bindings_;
};

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_CONFIG_OPTION_TABLE_H_
