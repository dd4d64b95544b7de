// Lets a consumer take the items of some lists while the unpickler runs, so
// that the tree never holds them. A PyTorch snapshot is mostly one long list
// per device of small trace-entry dicts; as a tree those cost ~3x the file
// (16 bytes a node, 4 an element, keys repeated in every dict), so the
// snapshot reader converts each batch of entries as it is appended and the
// unpickler forgets the batch (notes/perf-snap.md).
//
// Before the items of an APPEND or APPENDS go into a list, Take() is offered
// them. Returning true means the consumer has used them: they are not added
// to the list (its size stays what it was), they are frozen as if placed in
// it, and the unpickler may then discard the nodes built since the batch's
// MARK, when nothing else can reach them: no memo entry but the items'
// own, no older container extended in between, no other list taken in
// between. A later memo get of a discarded item is an error. After a
// discard Dropped() tells the consumer that node ids from `first` on are
// gone (and will be reused), so it must forget any it keeps.
//
// The items are complete when offered: every container inside them is
// frozen and contiguous, so PickleValue reads them as in a finished tree.
#ifndef HBMSIM_TRACE_PICKLE_LIST_SINK_H_
#define HBMSIM_TRACE_PICKLE_LIST_SINK_H_

#include <cstddef>

#include "trace/pickle/pickle_tree.h"

namespace hbmsim::trace {

class PickleListSink {
 public:
  virtual ~PickleListSink() = default;
  // `tree` is the tree being built (no root yet); `list` a list node.
  virtual bool Take(const PickleTree& tree, PickleNodeId list, const PickleNodeId* items, size_t n) = 0;
  virtual void Dropped(PickleNodeId first) = 0;
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_PICKLE_LIST_SINK_H_
