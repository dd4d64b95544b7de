// Internal to snapshot_parse.cc: reads `frames` lists and label strings of a
// snapshot into its ContextTable. A frame list or frame the pickle shares
// (memoized; PyTorch shares them among thousands of entries) is read once
// and every later reference reuses its id, so the work is linear in the
// tree's size however often a list is referenced.
#ifndef HBMSIM_TRACE_TORCH_SNAPSHOT_CONTEXT_H_
#define HBMSIM_TRACE_TORCH_SNAPSHOT_CONTEXT_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "trace/core/context_table.h"
#include "trace/pickle/pickle_tree.h"
#include "trace/torch/fields.h"

namespace hbmsim {

class ContextReader {
 public:
  ContextReader(FieldReader& r, ContextTable& table) : r_(r), table_(table) {}

  // dict[key] as a frame list: a list (or None) of {filename, line, name}
  // dicts, FX keys ignored. `out` is the list id (0: absent or empty);
  // false only on a malformed value (the error names its path).
  bool Frames(PickleValue dict, std::string_view key, const ValuePath& at, uint32_t& out);
  // dict[key] when it is a str (id, 0 when absent or empty); a value of
  // another type (user_metadata may be a dict in newer builds) is kept as 0.
  uint32_t String(PickleValue dict, std::string_view key);
  // The frames, category, user_metadata and compile_context of a trace entry.
  bool Entry(PickleValue entry, const ValuePath& at, EventContext& out);

 private:
  bool Frame(PickleValue f, const ValuePath& at, uint32_t& out);

  FieldReader& r_;
  ContextTable& table_;
  absl::flat_hash_map<PickleNodeId, uint32_t> lists_;   // pickle node → list id
  absl::flat_hash_map<PickleNodeId, uint32_t> frames_;  // pickle node → frame id
};

}  // namespace hbmsim

#endif  // HBMSIM_TRACE_TORCH_SNAPSHOT_CONTEXT_H_
