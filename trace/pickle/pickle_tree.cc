#include "trace/pickle/pickle_tree.h"

#include <bit>
#include <limits>

namespace hbmsim::trace {

std::string_view PickleKindName(PickleKind k) {
  switch (k) {
    case PickleKind::kNone:
      return "None";
    case PickleKind::kBool:
      return "bool";
    case PickleKind::kInt:
    case PickleKind::kUInt:
    case PickleKind::kBigInt:
      return "int";
    case PickleKind::kFloat:
      return "float";
    case PickleKind::kString:
      return "str";
    case PickleKind::kBytes:
      return "bytes";
    case PickleKind::kList:
      return "list";
    case PickleKind::kTuple:
      return "tuple";
    case PickleKind::kDict:
      return "dict";
  }
  return "?";
}

const PickleNode& PickleValue::node() const { return tree_->nodes_[id_]; }

PickleKind PickleValue::kind() const { return node().kind; }

bool PickleValue::is_integer() const {
  const PickleKind k = kind();
  return k == PickleKind::kInt || k == PickleKind::kUInt || k == PickleKind::kBigInt;
}

std::optional<bool> PickleValue::AsBool() const {
  if (kind() != PickleKind::kBool) return std::nullopt;
  return node().bits != 0;
}

std::optional<int64_t> PickleValue::AsInt64() const {
  if (kind() != PickleKind::kInt) return std::nullopt;
  return static_cast<int64_t>(node().bits);
}

std::optional<uint64_t> PickleValue::AsUInt64() const {
  const PickleNode& n = node();
  if (n.kind == PickleKind::kUInt) return n.bits;
  if (n.kind == PickleKind::kInt && static_cast<int64_t>(n.bits) >= 0) return n.bits;
  return std::nullopt;
}

std::optional<double> PickleValue::AsDouble() const {
  const PickleNode& n = node();
  switch (n.kind) {
    case PickleKind::kFloat:
      return std::bit_cast<double>(n.bits);
    case PickleKind::kInt:
      return static_cast<double>(static_cast<int64_t>(n.bits));
    case PickleKind::kUInt:
      return static_cast<double>(n.bits);
    default:
      return std::nullopt;
  }
}

std::string_view PickleValue::AsString() const {
  const PickleNode& n = node();
  if (n.kind != PickleKind::kString && n.kind != PickleKind::kBytes) return {};
  return tree_->data_.view().substr(n.bits, n.size);
}

size_t PickleValue::size() const {
  const PickleNode& n = node();
  switch (n.kind) {
    case PickleKind::kString:
    case PickleKind::kBytes:
    case PickleKind::kList:
    case PickleKind::kTuple:
    case PickleKind::kDict:
      return n.size;
    default:
      return 0;
  }
}

PickleValue PickleValue::at(size_t i) const { return PickleValue(tree_, tree_->elements_[node().bits + i]); }

PickleValue PickleValue::key(size_t i) const {
  return PickleValue(tree_, tree_->elements_[node().bits + 2 * i]);
}

PickleValue PickleValue::value(size_t i) const {
  return PickleValue(tree_, tree_->elements_[node().bits + 2 * i + 1]);
}

std::optional<PickleValue> PickleValue::Find(std::string_view wanted) const {
  if (!is_dict()) return std::nullopt;
  // Python keeps the last value stored under a key; scan backwards for it.
  for (size_t i = size(); i-- > 0;) {
    const PickleValue k = key(i);
    if (k.is_string() && k.AsString() == wanted) return value(i);
  }
  return std::nullopt;
}

}  // namespace hbmsim::trace
