// The value tree a safe unpickle produces: plain data (None, bool, int, float,
// str, bytes, list, tuple, dict) and nothing that can name or call code.
//
// Layout. Every value is a 16-byte Node in one arena; containers list their
// elements as a contiguous range of node ids in a second array; strings are
// (offset, length) views into the pickle bytes the tree owns (a string or a
// mapping of the file, pickle_bytes.h). A memoized value
// that the pickle refers to a thousand times (PyTorch snapshots share every
// frame list and most strings this way) is one node referenced by id a
// thousand times, never copied, so the tree is linear in the input size.
//
// Invariants the unpickler guarantees, so consumers may rely on them:
//   - the graph is acyclic (a DAG: shared nodes, no cycles);
//   - Height(node) <= the nesting limit, so a recursive walk is bounded;
//   - NodeCount() + ElementCount() <= 2 * (the input size in bytes + a small
//     constant): the unpickler caps values at bytes + 64, and making a list
//     that grew in several batches contiguous copies its elements once more.
// A consumer that expands shared nodes (visits a shared list once per
// reference) must still bound its own work: a 2 KB pickle can describe a
// DAG whose expansion has 10^15 leaves.
#ifndef HBMSIM_TRACE_PICKLE_PICKLE_TREE_H_
#define HBMSIM_TRACE_PICKLE_PICKLE_TREE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/pickle/pickle_bytes.h"

namespace hbmsim::trace {

enum class PickleKind : uint8_t {
  kNone,
  kBool,
  kInt,     // fits in int64
  kUInt,    // in [2^63, 2^64): held as uint64
  kBigInt,  // wider than 64 bits: kept as its little-endian two's-complement bytes
  kFloat,
  kString,  // str, as the UTF-8 bytes the pickle holds
  kBytes,   // bytes / bytearray / protocol-2 BINSTRING
  kList,
  kTuple,
  kDict,  // (key, value) pairs in pickle order; a later equal key wins in Find
};

std::string_view PickleKindName(PickleKind k);

using PickleNodeId = uint32_t;

struct PickleNode {
  PickleKind kind = PickleKind::kNone;
  uint8_t flags = 0;    // builder state (frozen, chained); see tree_builder.h
  uint16_t height = 0;  // 0 for scalars and empty containers
  uint32_t size = 0;    // string/bytes length, list/tuple elements, dict pairs
  uint64_t bits = 0;    // int/float bits, data offset, or first element index
};

class PickleTree;

// A cheap handle to one value of a tree (the tree must outlive it).
class PickleValue {
 public:
  PickleValue(const PickleTree* tree, PickleNodeId id) : tree_(tree), id_(id) {}

  PickleNodeId id() const { return id_; }
  PickleKind kind() const;
  std::string_view KindName() const { return PickleKindName(kind()); }
  bool is_none() const { return kind() == PickleKind::kNone; }
  bool is_string() const { return kind() == PickleKind::kString; }
  bool is_list() const { return kind() == PickleKind::kList; }
  bool is_dict() const { return kind() == PickleKind::kDict; }
  // A list or a tuple.
  bool is_sequence() const { return is_list() || kind() == PickleKind::kTuple; }
  bool is_integer() const;

  // The value when it is a bool.
  std::optional<bool> AsBool() const;
  // The exact value when it is an integer that fits (bools are not integers here).
  std::optional<int64_t> AsInt64() const;
  std::optional<uint64_t> AsUInt64() const;
  // A float, or an integer converted to double.
  std::optional<double> AsDouble() const;
  // The bytes of a str or bytes value; empty for any other kind.
  std::string_view AsString() const;

  // Elements of a list/tuple, pairs of a dict, bytes of a string.
  size_t size() const;
  // Element `i` (< size()) of a list or tuple.
  PickleValue at(size_t i) const;
  // Key and value of pair `i` (< size()) of a dict.
  PickleValue key(size_t i) const;
  PickleValue value(size_t i) const;
  // The value of the last pair whose key is the string `key`, if any.
  std::optional<PickleValue> Find(std::string_view key) const;

 private:
  const PickleNode& node() const;
  const PickleTree* tree_;
  PickleNodeId id_;
};

class PickleTree {
 public:
  PickleTree() = default;
  PickleTree(PickleTree&&) = default;
  PickleTree& operator=(PickleTree&&) = default;

  PickleValue root() const { return PickleValue(this, root_); }
  size_t NodeCount() const { return nodes_.size(); }
  size_t ElementCount() const { return elements_.size(); }
  // The deepest container nesting (0 when the root is a scalar).
  uint32_t Height() const { return nodes_.empty() ? 0 : nodes_[root_].height; }
  // Nodes built and then discarded because a PickleListSink took them
  // (list_sink.h); NodeCount() + DroppedCount() is every node the input made.
  size_t DroppedCount() const { return dropped_; }
  std::string_view file_name() const { return file_name_; }

 private:
  friend class PickleValue;
  friend class PickleTreeBuilder;

  std::string file_name_;
  PickleBytes data_;  // the pickle bytes; strings point into it
  std::vector<PickleNode> nodes_;
  std::vector<PickleNodeId> elements_;  // container contents, one range per container
  PickleNodeId root_ = 0;
  size_t dropped_ = 0;
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_PICKLE_PICKLE_TREE_H_
