// Typed, path-aware access to the dicts of an unpickled snapshot. The first
// problem found is kept as an InvalidArgument status that names the file and
// the value's path ("snap.pickle: segments[3].blocks[2].size: expected int,
// found str"); paths are only spelled out when an error happens.
#ifndef HBMSIM_TRACE_TORCH_FIELDS_H_
#define HBMSIM_TRACE_TORCH_FIELDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "trace/pickle/pickle_tree.h"

namespace hbmsim::trace {

// One step of a path: ".key" or "[index]" under `parent`.
struct ValuePath {
  const ValuePath* parent = nullptr;
  std::string_view key;
  int64_t index = -1;

  ValuePath Key(std::string_view k) const { return ValuePath{this, k, -1}; }
  ValuePath Index(size_t i) const { return ValuePath{this, {}, static_cast<int64_t>(i)}; }
  std::string ToString() const;
};

class FieldReader {
 public:
  // `budget`: how many segments, blocks and trace entries may be visited. A
  // pickle shares values by reference, so a small file can name the same
  // block a billion times; a real snapshot never visits more items than the
  // tree has nodes.
  FieldReader(std::string_view file_name, uint64_t budget) : file_name_(file_name), budget_(budget) {}

  const absl::Status& status() const { return status_; }
  bool ok() const { return status_.ok(); }
  // The first problem found, and the reader ready for the next value.
  absl::Status TakeStatus() { return std::exchange(status_, absl::OkStatus()); }
  bool Fail(const ValuePath& at, std::string_view what);
  // Keeps `s` as the problem (when none was found before); returns false.
  bool Fail(absl::Status s) {
    if (status_.ok()) status_ = std::move(s);
    return false;
  }
  // Spends `n` items of the budget; false (and an error) when it runs out.
  bool Spend(uint64_t n, const ValuePath& at);

  bool ExpectKind(PickleValue v, PickleKind kind, const ValuePath& at);
  // A list or a tuple.
  bool ExpectSequence(PickleValue v, const ValuePath& at);

  // dict[key]; an error when `required` and absent.
  std::optional<PickleValue> Get(PickleValue dict, std::string_view key, const ValuePath& at, bool required);
  // Reads dict[key] into `out` when present; false only on error (a
  // missing required key, or the wrong type). `out` keeps its value when the
  // key is absent.
  bool U64(PickleValue dict, std::string_view key, const ValuePath& at, bool required, uint64_t& out);
  bool I64(PickleValue dict, std::string_view key, const ValuePath& at, bool required, int64_t& out);
  bool Str(PickleValue dict, std::string_view key, const ValuePath& at, bool required, std::string_view& out);
  bool Bool(PickleValue dict, std::string_view key, const ValuePath& at, bool required, bool& out);

 private:
  bool WrongType(PickleValue v, std::string_view expected, const ValuePath& at);

  std::string_view file_name_;
  uint64_t budget_;
  absl::Status status_;
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TORCH_FIELDS_H_
