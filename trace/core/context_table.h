// What a recording knew about its events besides sizes and addresses: the
// stack frames of each allocation, and free-form labels (a category, user
// metadata, a compile context), as PyTorch memory snapshots carry them
// (reference/pytorch-caching-allocator.md §3.2). Readers of formats that have
// them fill a ContextTable once and describe each event with an EventContext
// of ids into it, so an event stays a plain value and shared frame lists are
// stored once (a snapshot shares every frame list among thousands of entries).
//
//   ContextTable   frames:  [StackFrame, ...]          (each distinct frame once)
//                  lists:   [[], [f3, f7, f1], ...]     (list 0 is the empty list)
//                  strings: ["", "weights", ...]       (string 0 is "none")
//   EventContext   {frames = list id, category / user_metadata /
//                   compile_context = string ids}
#ifndef HBMSIM_TRACE_CORE_CONTEXT_TABLE_H_
#define HBMSIM_TRACE_CORE_CONTEXT_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace hbmsim::trace {

struct StackFrame {
  std::string filename;
  int64_t line = 0;
  std::string name;
};

// A boundary of a named range of the program (PyTorch's record_function,
// `external_annotations`): stage "START" or "END".
struct RangeAnnotation {
  std::string stage;
  std::string name;
  int64_t device = 0;
  std::optional<uint64_t> time_us;
};

class ContextTable {
 public:
  ContextTable() : lists_(1), strings_(1) {}

  uint32_t AddFrame(StackFrame f);
  // A list of frame ids (innermost first, as recorded); returns its id.
  uint32_t AddList(std::vector<uint32_t> frames);
  // Interned by value; "" is id 0.
  uint32_t AddString(std::string_view s);

  const StackFrame& frame(uint32_t id) const { return frames_[id]; }
  const std::vector<uint32_t>& list(uint32_t id) const { return lists_[id]; }
  const std::string& string(uint32_t id) const { return strings_[id]; }
  size_t list_count() const { return lists_.size(); }

  // Annotations of the whole recording, in file order.
  std::vector<RangeAnnotation> annotations;

 private:
  std::vector<StackFrame> frames_;
  std::vector<std::vector<uint32_t>> lists_;
  std::vector<std::string> strings_;
  absl::flat_hash_map<std::string, uint32_t> string_ids_;
};

// The context of one event: ids into its reader's ContextTable, 0 = none.
struct EventContext {
  uint32_t frames = 0;
  // true: `category` is the event's category (possibly none); false: the
  // format has no categories and the event's `tag=` stands for one.
  bool has_category = false;
  uint32_t category = 0;
  uint32_t user_metadata = 0;
  uint32_t compile_context = 0;
  // A `mark` that restates something the recording's allocator did
  // (segment_alloc, snapshot, ...), not a phase the program marked.
  bool allocator_action = false;
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_CORE_CONTEXT_TABLE_H_
