// Internal to snapshot_parse.cc: reads `frames` lists and label strings of a
// snapshot into its ContextTable. A frame list or frame the pickle shares
// (memoized; PyTorch shares them among thousands of entries) is read once
// and every later reference reuses its id, so the work is linear in the
// tree's size however often a list is referenced.
//
// While the device traces stream (snapshot_stream.h) the same reader serves
// the stream and, after it, the segments, so a frame list shared by a block
// and an entry keeps one id. Node ids of a batch the unpickler discards are
// reused, so the ids first seen since Track() are forgotten by Forget().
#ifndef HBMSIM_TRACE_TORCH_SNAPSHOT_CONTEXT_H_
#define HBMSIM_TRACE_TORCH_SNAPSHOT_CONTEXT_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/hash/hash.h"

#include "absl/container/flat_hash_map.h"
#include "trace/core/context_table.h"
#include "trace/pickle/pickle_tree.h"
#include "trace/torch/fields.h"

namespace hbmsim::trace {

class ContextReader {
 public:
  ContextReader(FieldReader& r, ContextTable& table, std::vector<EventContext>& entry_contexts)
      : r_(&r), table_(table), entry_contexts_(entry_contexts) {}

  // The reader that takes errors and spends the budget from now on.
  void set_reader(FieldReader& r) { r_ = &r; }
  // Starts remembering the node ids cached from now on (recording stops at
  // Forget, or at the next Track).
  void Track() {
    tracking_ = true;
    recent_.clear();
  }
  // Forgets the cached ids >= `first` among those remembered.
  void Forget(PickleNodeId first);

  // dict[key] as a frame list: a list (or None) of {filename, line, name}
  // dicts, FX keys ignored. `out` is the list id (0: absent or empty);
  // false only on a malformed value (the error names its path).
  bool Frames(PickleValue dict, std::string_view key, const ValuePath& at, uint32_t& out);
  // dict[key] when it is a str (id, 0 when absent or empty); a value of
  // another type (user_metadata may be a dict in newer builds) is kept as 0.
  uint32_t String(PickleValue dict, std::string_view key);
  // The frames, category, user_metadata and compile_context of a trace
  // entry, as an index into the entry contexts (equal contexts share one).
  bool Entry(PickleValue entry, const ValuePath& at, uint32_t& out);

 private:
  bool Frame(PickleValue f, const ValuePath& at, uint32_t& out);

  struct ContextHash {
    size_t operator()(const EventContext& c) const {
      return absl::HashOf(c.frames, c.has_category, c.category, c.user_metadata, c.compile_context,
                          c.allocator_action);
    }
  };
  struct ContextEq {
    bool operator()(const EventContext& a, const EventContext& b) const {
      return a.frames == b.frames && a.has_category == b.has_category && a.category == b.category &&
             a.user_metadata == b.user_metadata && a.compile_context == b.compile_context &&
             a.allocator_action == b.allocator_action;
    }
  };
  void Remember(PickleNodeId id) {
    if (tracking_) recent_.push_back(id);
  }

  FieldReader* r_;
  ContextTable& table_;
  std::vector<EventContext>& entry_contexts_;
  absl::flat_hash_map<EventContext, uint32_t, ContextHash, ContextEq> context_ids_;
  bool tracking_ = false;
  std::vector<PickleNodeId> recent_;  // ids cached since Track()
  absl::flat_hash_map<PickleNodeId, uint32_t> lists_;   // pickle node → list id
  absl::flat_hash_map<PickleNodeId, uint32_t> frames_;  // pickle node → frame id
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TORCH_SNAPSHOT_CONTEXT_H_
