#include "trace/torch/fields.h"

#include "fmt/format.h"

namespace hbmsim::trace {

std::string ValuePath::ToString() const {
  std::string prefix = parent != nullptr ? parent->ToString() : std::string();
  if (index >= 0) return fmt::format("{}[{}]", prefix, index);
  if (key.empty()) return prefix;
  return prefix.empty() ? std::string(key) : fmt::format("{}.{}", prefix, key);
}

bool FieldReader::Fail(const ValuePath& at, std::string_view what) {
  if (status_.ok()) {
    const std::string path = at.ToString();
    status_ = absl::InvalidArgumentError(path.empty() ? fmt::format("{}: {}", file_name_, what)
                                                      : fmt::format("{}: {}: {}", file_name_, path, what));
  }
  return false;
}

bool FieldReader::Spend(uint64_t n, const ValuePath& at) {
  if (n <= budget_) {
    budget_ -= n;
    return true;
  }
  return Fail(at,
              "the snapshot names more segments, blocks and trace entries than it holds values "
              "(shared references); refused");
}

bool FieldReader::WrongType(PickleValue v, std::string_view expected, const ValuePath& at) {
  return Fail(at, fmt::format("expected {}, found {}", expected, v.KindName()));
}

bool FieldReader::ExpectKind(PickleValue v, PickleKind kind, const ValuePath& at) {
  return v.kind() == kind || WrongType(v, PickleKindName(kind), at);
}

bool FieldReader::ExpectSequence(PickleValue v, const ValuePath& at) {
  return v.is_sequence() || WrongType(v, "list", at);
}

std::optional<PickleValue> FieldReader::Get(PickleValue dict, std::string_view key, const ValuePath& at,
                                            bool required) {
  std::optional<PickleValue> v = dict.Find(key);
  if (!v && required) Fail(at, fmt::format("missing key '{}'", key));
  return v;
}

bool FieldReader::U64(PickleValue dict, std::string_view key, const ValuePath& at, bool required,
                      uint64_t& out) {
  const std::optional<PickleValue> v = Get(dict, key, at, required);
  if (!v) return ok();
  if (const std::optional<uint64_t> n = v->AsUInt64()) {
    out = *n;
    return true;
  }
  if (v->is_integer()) return Fail(at.Key(key), "integer out of range (expects 0 to 2^64-1)");
  return WrongType(*v, "int", at.Key(key));
}

bool FieldReader::I64(PickleValue dict, std::string_view key, const ValuePath& at, bool required,
                      int64_t& out) {
  const std::optional<PickleValue> v = Get(dict, key, at, required);
  if (!v) return ok();
  if (const std::optional<int64_t> n = v->AsInt64()) {
    out = *n;
    return true;
  }
  if (v->is_integer()) return Fail(at.Key(key), "integer out of range (expects a signed 64-bit value)");
  return WrongType(*v, "int", at.Key(key));
}

bool FieldReader::Str(PickleValue dict, std::string_view key, const ValuePath& at, bool required,
                      std::string_view& out) {
  const std::optional<PickleValue> v = Get(dict, key, at, required);
  if (!v) return ok();
  if (!v->is_string()) return WrongType(*v, "str", at.Key(key));
  out = v->AsString();
  return true;
}

bool FieldReader::Bool(PickleValue dict, std::string_view key, const ValuePath& at, bool required,
                       bool& out) {
  const std::optional<PickleValue> v = Get(dict, key, at, required);
  if (!v) return ok();
  const std::optional<bool> b = v->AsBool();
  if (!b) return WrongType(*v, "bool", at.Key(key));
  out = *b;
  return true;
}

}  // namespace hbmsim::trace
