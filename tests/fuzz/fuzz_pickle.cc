// libFuzzer target: the safe unpickler (trace/pickle) with its default limits,
// then every node of the tree it built, checked against the invariants
// pickle_tree.h promises consumers (linear size, bounded height, valid ids).
#include <cstddef>
#include <cstdint>

#include "fmt/format.h"
#include "tests/fuzz/fuzz_util.h"
#include "trace/pickle/unpickler.h"

namespace {

using hbmsim::PickleKind;
using hbmsim::PickleTree;
using hbmsim::PickleValue;

// The unpickler's own slack over "one value per input byte" (unpickler.h);
// pickle_tree.h allows twice that once batched lists are made contiguous.
constexpr uint64_t kValueSlack = 64;

// An element id must name a node of the tree: consumers index with it unchecked.
void CheckChild(const PickleTree& tree, const PickleValue& parent, const PickleValue& child) {
  if (child.id() >= tree.NodeCount()) {
    hbmsim::fuzz::Fail(fmt::format("node {} has element {} past the {} nodes", parent.id(), child.id(),
                                   tree.NodeCount()));
  }
  (void)child.kind();
}

// Reads every accessor of every node once (no expansion of shared nodes).
uint64_t VisitNode(const PickleTree& tree, const PickleValue& v) {
  uint64_t sum = v.AsString().size() + v.AsBool().value_or(false) + v.AsInt64().value_or(0) +
                 v.AsUInt64().value_or(0) + static_cast<uint64_t>(v.AsDouble().has_value());
  for (char c : v.AsString()) sum += static_cast<unsigned char>(c);
  if (v.is_sequence()) {
    for (size_t i = 0; i < v.size(); ++i) CheckChild(tree, v, v.at(i));
  } else if (v.is_dict()) {
    for (size_t i = 0; i < v.size(); ++i) {
      CheckChild(tree, v, v.key(i));
      CheckChild(tree, v, v.value(i));
    }
    if (v.size() > 0 && v.key(0).is_string()) sum += v.Find(v.key(0).AsString()).has_value();
  }
  return sum;
}

}  // namespace

HBMSIM_FUZZ_ENTRY(pickle, PickleFuzzCorpus) {
  using namespace hbmsim;
  const std::string name = "fuzz.pickle";
  absl::StatusOr<PickleTree> tree = Unpickle(fuzz::AsString(data, size), name);
  if (!tree.ok()) {
    fuzz::CheckErrorMessage(tree.status(), name);
    return 0;
  }
  if (tree->NodeCount() + tree->ElementCount() > 2 * (size + kValueSlack)) {
    fuzz::Fail(fmt::format("{} nodes + {} elements from {} bytes", tree->NodeCount(), tree->ElementCount(), size));
  }
  if (tree->Height() > UnpickleLimits{}.max_nesting) {
    fuzz::Fail(fmt::format("height {} above the nesting limit", tree->Height()));
  }
  volatile uint64_t sum = 0;
  for (PickleNodeId id = 0; id < tree->NodeCount(); ++id) sum = sum + VisitNode(*tree, PickleValue(&*tree, id));
  return 0;
}
