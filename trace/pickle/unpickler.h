// A safe unpickler for plain-data pickles (protocols 2-5), written for
// PyTorch memory snapshots (reference/pytorch-caching-allocator.md §3.5).
//
// It runs only the opcodes that build None, bool, int, float, str, bytes,
// list, tuple and dict, and refuses every opcode that imports or calls code
// (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, NEWOBJ_EX, PERSID,
// BINPERSID, EXT1/2/4), naming it and its byte offset:
//   "snap.pickle: byte 1234: opcode REDUCE calls code; refused"
//
// Hostile input is expected. The virtual machine is a loop over an explicit
// stack (no recursion); every declared length is checked against the bytes
// that remain before anything is reserved; memo indices are bounds-checked;
// the stack, the open MARKs, the nesting depth and the number of values are
// capped (UnpickleLimits); cycles are refused (see tree_builder.h). Errors
// are InvalidArgument statuses "<file>: byte <offset>: <what>". Bytes after
// STOP are ignored, as pickle.load ignores them.
#ifndef HBMSIM_TRACE_PICKLE_UNPICKLER_H_
#define HBMSIM_TRACE_PICKLE_UNPICKLER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "trace/pickle/list_sink.h"
#include "trace/pickle/pickle_bytes.h"
#include "trace/pickle/pickle_tree.h"

namespace hbmsim::trace {

struct UnpickleLimits {
  // Containers inside containers. Snapshots nest 6 deep (dict, list, dict,
  // list, dict, frames list, frame dict).
  uint16_t max_nesting = 1000;
  // MARKs open at once; each one opens a nesting level.
  uint32_t max_marks = 1000;
  // Values on the VM stack at once. TorchScript's pickler puts a whole list
  // on the stack before APPENDS (CPython batches by 1000).
  uint64_t max_stack = uint64_t{1} << 24;
  // Nodes + container elements in the tree; 0 means "input bytes + 64", which
  // no well-formed pickle can exceed (each value costs at least one opcode).
  uint64_t max_values = 0;
};

// Parses `data` (the whole pickle); `file_name` prefixes messages. A `sink`
// may take list items as they are appended (list_sink.h).
absl::StatusOr<PickleTree> Unpickle(PickleBytes data, std::string_view file_name,
                                    const UnpickleLimits& limits = {}, PickleListSink* sink = nullptr);
absl::StatusOr<PickleTree> Unpickle(std::string data, std::string_view file_name,
                                    const UnpickleLimits& limits = {});

// Maps `path` (pickle_bytes.h) and parses it; messages start with `path`.
absl::StatusOr<PickleTree> UnpickleFile(const std::string& path, const UnpickleLimits& limits = {},
                                        PickleListSink* sink = nullptr);

// The bytes of a file, or NotFound/InvalidArgument naming it.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_PICKLE_UNPICKLER_H_
