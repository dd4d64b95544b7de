// Builds a PickleTree while the unpickler runs, enforcing the tree's
// invariants one element at a time so that no pass over the finished tree is
// needed and no input can make the builder recurse, cycle or blow up.
//
// The rule that keeps the graph acyclic and the heights exact: a container
// that has been placed inside another container is frozen and may not receive
// more elements, and no container may be placed inside itself. CPython's and
// TorchScript's picklers finish each container before its parent takes it, so
// real data never breaks the rule; only self-referencing (cyclic) objects do.
// With it, a child's height is final when it is attached, and a parent's
// height is max(child height) + 1, checked against the nesting limit at once.
//
// A list receives its elements in batches (APPENDS of up to 1000 items, with
// the nested values built in between), so during the build a container's
// elements are a chain of chunks; a container's range is made contiguous
// when it is frozen (so a PickleListSink can read finished values while the
// build goes on), and Finish() does it for those never frozen.
#ifndef HBMSIM_TRACE_PICKLE_TREE_BUILDER_H_
#define HBMSIM_TRACE_PICKLE_TREE_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "trace/pickle/pickle_tree.h"

namespace hbmsim::trace {

enum class BuildError : uint8_t {
  kOk,
  kFrozen,         // the container is already inside another container
  kSelf,           // a container placed inside itself
  kTooDeep,        // nesting beyond the limit
  kTooManyValues,  // nodes + elements beyond the limit
  kTooLarge,       // more than 2^32 - 1 elements in one container
};

class PickleTreeBuilder {
 public:
  // `max_values` caps NodeCount() + ElementCount(); `max_height` caps nesting.
  PickleTreeBuilder(std::string file_name, PickleBytes data, uint64_t max_values, uint16_t max_height);

  std::string_view data() const { return tree_.data_.view(); }
  void ReleaseData(size_t end) { tree_.data_.Release(end); }
  // The tree so far, for a PickleListSink.
  const PickleTree& partial() const { return tree_; }
  size_t node_count() const { return tree_.nodes_.size(); }
  size_t element_count() const { return tree_.elements_.size(); }
  // Chains started or sealed so far: their element ranges move.
  uint64_t chain_changes() const { return chain_order_.size() + seals_; }
  bool is_taken(PickleNodeId id) const { return tree_.nodes_[id].flags & kTaken; }
  PickleKind kind(PickleNodeId id) const { return tree_.nodes_[id].kind; }

  // Adds a scalar or string node; false when the value cap is reached.
  bool AddScalar(PickleKind kind, uint64_t bits, uint32_t size, PickleNodeId& out) {
    if (!HasRoom(1) || tree_.nodes_.size() >= kMaxNodes) [[unlikely]] {
      return false;
    }
    out = static_cast<PickleNodeId>(tree_.nodes_.size());
    tree_.nodes_.push_back(PickleNode{kind, 0, 0, size, bits});
    return true;
  }
  // Adds a str or bytes node holding a copy of `s` (a tree built from values
  // rather than pickle bytes: python/snapshot_tree.cc).
  bool AddString(PickleKind kind, std::string_view s, PickleNodeId& out) {
    if (s.size() > UINT32_MAX) return false;
    return AddScalar(kind, tree_.data_.Append(s), static_cast<uint32_t>(s.size()), out);
  }
  // Adds an empty list, tuple or dict.
  bool AddContainer(PickleKind kind, PickleNodeId& out);
  // Appends `n` elements (a dict takes key, value, key, value...; n is even).
  BuildError Extend(PickleNodeId container, const PickleNodeId* items, size_t n);

  // Extend() without storing the elements: the checks, the freezing and the
  // height, for items a PickleListSink took; they are marked taken.
  BuildError Absorb(PickleNodeId container, const PickleNodeId* items, size_t n);
  // Makes a chained container's elements contiguous now.
  void Seal(PickleNodeId id);
  // Forgets every node from `nodes` and element from `elements` on (the
  // batch a sink took; the caller has checked nothing else reaches them).
  void Truncate(size_t nodes, size_t elements);

  // The finished tree with `root` as its root.
  PickleTree Finish(PickleNodeId root);

 private:
  static constexpr uint8_t kFrozen = 1;   // placed inside a container: may no longer change
  static constexpr uint8_t kChained = 2;  // its elements are a chain in chain_tail_
  static constexpr uint8_t kTaken = 4;    // an item a PickleListSink took
  static constexpr uint32_t kNoChunk = UINT32_MAX;
  static constexpr size_t kMaxNodes = UINT32_MAX;  // node ids are 32-bit
  struct Chunk {
    uint64_t start = 0;  // index into elements_
    uint64_t count = 0;
    uint32_t next = kNoChunk;
  };
  struct ChainHead {
    PickleNodeId node;
    uint32_t head;
  };
  bool HasRoom(size_t more) const {
    return tree_.nodes_.size() + tree_.elements_.size() + more <= max_values_;
  }
  BuildError AttachChildren(PickleNodeId parent_id, const PickleNodeId* items, size_t n, uint16_t& height);
  void AppendChunk(PickleNode& container, uint64_t start, uint32_t count);
  void MakeContiguous(PickleNodeId id, uint32_t head);

  PickleTree tree_;
  std::vector<Chunk> chunks_;
  // Containers whose elements arrived in separate ranges: chain tail by node,
  // and the chains in creation order (so the final layout is deterministic).
  struct ChainEnds {
    uint32_t head;
    uint32_t tail;
  };
  absl::flat_hash_map<PickleNodeId, ChainEnds> chain_tail_;
  std::vector<ChainHead> chain_order_;
  uint64_t max_values_;
  uint64_t seals_ = 0;
  uint16_t max_height_;
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_PICKLE_TREE_BUILDER_H_
