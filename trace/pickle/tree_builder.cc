#include "trace/pickle/tree_builder.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace hbmsim::trace {
namespace {

bool IsContainer(PickleKind k) {
  return k == PickleKind::kList || k == PickleKind::kTuple || k == PickleKind::kDict;
}

// Elements a container occupies in the element array (a dict pair takes two).
uint64_t ElementSlots(const PickleNode& n) {
  return n.kind == PickleKind::kDict ? uint64_t{n.size} * 2 : n.size;
}

}  // namespace

PickleTreeBuilder::PickleTreeBuilder(std::string file_name, PickleBytes data, uint64_t max_values,
                                     uint16_t max_height)
    : max_values_(max_values), max_height_(max_height) {
  tree_.file_name_ = std::move(file_name);
  tree_.data_ = std::move(data);
  // Real snapshots hold about one node per 4 input bytes and one element per
  // 3; reserving that up front avoids most regrowth copies.
  const size_t guess = tree_.data_.view().size() / 4;
  tree_.nodes_.reserve(guess);
  tree_.elements_.reserve(guess);
}

bool PickleTreeBuilder::AddContainer(PickleKind kind, PickleNodeId& out) {
  return AddScalar(kind, 0, 0, out);
}

// Freezes each container among `items` and returns the parent's new height.
// The height lives in a local while the loop runs: writing it through the
// parent node each time would chain every iteration to the previous store.
BuildError PickleTreeBuilder::AttachChildren(PickleNodeId parent_id, const PickleNodeId* items, size_t n,
                                             uint16_t& height) {
  uint32_t h = height == 0 ? 1 : height;  // any element makes the height at least 1
  for (size_t i = 0; i < n; ++i) {
    PickleNode& c = tree_.nodes_[items[i]];
    if (!IsContainer(c.kind)) continue;
    if (items[i] == parent_id) return BuildError::kSelf;
    c.flags |= kFrozen;
    if (c.flags & kChained) Seal(items[i]);
    if (c.height >= max_height_) return BuildError::kTooDeep;
    h = std::max<uint32_t>(h, c.height + 1u);
  }
  height = static_cast<uint16_t>(h);
  return BuildError::kOk;
}

BuildError PickleTreeBuilder::Extend(PickleNodeId container, const PickleNodeId* items, size_t n) {
  if (n == 0) return BuildError::kOk;
  PickleNode& parent = tree_.nodes_[container];
  if (parent.flags & kFrozen) return BuildError::kFrozen;
  const uint64_t added = parent.kind == PickleKind::kDict ? n / 2 : n;
  if (uint64_t{parent.size} + added > std::numeric_limits<uint32_t>::max()) return BuildError::kTooLarge;
  if (!HasRoom(n)) return BuildError::kTooManyValues;
  uint16_t height = parent.height;
  const BuildError e = AttachChildren(container, items, n, height);
  if (e != BuildError::kOk) return e;
  parent.height = height;
  const uint64_t start = tree_.elements_.size();
  tree_.elements_.insert(tree_.elements_.end(), items, items + n);
  AppendChunk(parent, start, static_cast<uint32_t>(n));
  parent.size += static_cast<uint32_t>(added);
  return BuildError::kOk;
}

BuildError PickleTreeBuilder::Absorb(PickleNodeId container, const PickleNodeId* items, size_t n) {
  PickleNode& parent = tree_.nodes_[container];
  if (parent.flags & kFrozen) return BuildError::kFrozen;
  uint16_t height = parent.height;
  for (size_t i = 0; i < n; ++i) Seal(items[i]);  // an item may be a dict filled in batches
  const BuildError e = AttachChildren(container, items, n, height);
  if (e != BuildError::kOk) return e;
  tree_.nodes_[container].height = height;
  for (size_t i = 0; i < n; ++i) tree_.nodes_[items[i]].flags |= kFrozen | kTaken;
  return BuildError::kOk;
}

void PickleTreeBuilder::Seal(PickleNodeId id) {
  PickleNode& n = tree_.nodes_[id];
  if (!(n.flags & kChained)) return;
  // Its ChainHead stays in chain_order_; Finish skips it (no kChained).
  const auto chain = chain_tail_.find(id);
  MakeContiguous(id, chain->second.head);
  ++seals_;
  tree_.nodes_[id].flags &= static_cast<uint8_t>(~kChained);
  chain_tail_.erase(chain);
}

void PickleTreeBuilder::Truncate(size_t nodes, size_t elements) {
  tree_.dropped_ += tree_.nodes_.size() - nodes;
  tree_.nodes_.resize(nodes);
  tree_.elements_.resize(elements);
}

// Called before parent.size grows. A container's first batch, and any batch
// that lands right after its previous one, needs no chain: bits is the start.
void PickleTreeBuilder::AppendChunk(PickleNode& parent, uint64_t start, uint32_t count) {
  const PickleNodeId id = static_cast<PickleNodeId>(&parent - tree_.nodes_.data());
  if (!(parent.flags & kChained)) {
    const uint64_t used = ElementSlots(parent);
    if (used == 0) {
      parent.bits = start;
      return;
    }
    if (parent.bits + used == start) return;  // contiguous with the first batch
    // Start a chain: the first range becomes chunk `head`, this batch its successor.
    const uint32_t head = static_cast<uint32_t>(chunks_.size());
    chunks_.push_back(Chunk{parent.bits, used, head + 1});
    chunks_.push_back(Chunk{start, count, kNoChunk});
    chain_tail_.emplace(id, ChainEnds{head, head + 1});
    parent.flags |= kChained;
    chain_order_.push_back(ChainHead{id, head});
    return;
  }
  const auto chain = chain_tail_.find(id);
  Chunk& tail = chunks_[chain->second.tail];
  if (tail.start + tail.count == start) {
    tail.count += count;
    return;
  }
  const uint32_t next = static_cast<uint32_t>(chunks_.size());
  tail.next = next;
  chunks_.push_back(Chunk{start, count, kNoChunk});
  chain->second.tail = next;
}

// Copies a chained container's chunks to the end of the element array. The
// old ranges stay behind unused, so the array at most doubles.
void PickleTreeBuilder::MakeContiguous(PickleNodeId id, uint32_t head) {
  std::vector<PickleNodeId>& elements = tree_.elements_;
  const uint64_t start = elements.size();
  for (uint32_t c = head; c != kNoChunk; c = chunks_[c].next) {
    const Chunk chunk = chunks_[c];
    for (uint64_t i = 0; i < chunk.count; ++i) elements.push_back(elements[chunk.start + i]);
  }
  tree_.nodes_[id].bits = start;
}

PickleTree PickleTreeBuilder::Finish(PickleNodeId root) {
  uint64_t chained = 0;
  for (const ChainHead& c : chain_order_) {
    if (tree_.nodes_[c.node].flags & kChained) chained += ElementSlots(tree_.nodes_[c.node]);
  }
  tree_.elements_.reserve(tree_.elements_.size() + chained);
  for (const ChainHead& c : chain_order_) {
    if (tree_.nodes_[c.node].flags & kChained) MakeContiguous(c.node, c.head);
  }
  tree_.root_ = root;
  return std::move(tree_);
}

}  // namespace hbmsim::trace
