// The unpickler's virtual machine (see unpickler.h for what it accepts and
// refuses). Private to trace/pickle: one pass over the bytes, an explicit value
// stack, MARK positions and the memo; values go to a PickleTreeBuilder.
// The checks that run for every opcode are inline here, their failure paths
// out of line, so the dispatch loop stays tight.
#ifndef HBMSIM_TRACE_PICKLE_MACHINE_H_
#define HBMSIM_TRACE_PICKLE_MACHINE_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "trace/pickle/list_sink.h"
#include "trace/pickle/opcodes.h"
#include "trace/pickle/pickle_tree.h"
#include "trace/pickle/tree_builder.h"
#include "trace/pickle/unpickler.h"

namespace hbmsim::trace::pickle_internal {

constexpr PickleNodeId kNoValue = std::numeric_limits<PickleNodeId>::max();
// A memo entry whose value a PickleListSink took and the machine discarded.
constexpr PickleNodeId kStreamed = kNoValue - 1;

// Little-endian unsigned integer of `n` <= 8 bytes.
inline uint64_t LoadLE(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

class Machine {
 public:
  Machine(PickleBytes data, std::string_view file_name, const UnpickleLimits& limits, PickleListSink* sink)
      : file_name_(file_name),
        limits_(limits),
        max_values_(limits.max_values != 0 ? limits.max_values : data.view().size() + 64),
        sink_(sink),
        builder_(std::string(file_name), std::move(data), max_values_, limits.max_nesting),
        bytes_(reinterpret_cast<const uint8_t*>(builder_.data().data())),
        size_(builder_.data().size()) {}

  absl::StatusOr<PickleTree> Run();

 private:
  bool Fail(std::string what) {
    status_ = absl::InvalidArgumentError(fmt::format("{}: byte {}: {}", file_name_, op_pos_, what));
    return false;
  }
  std::string_view OpName() const { return GetOpcodeInfo(bytes_[op_pos_]).name; }
  size_t Remaining() const { return size_ - pos_; }
  size_t Fence() const { return marks_.empty() ? 0 : marks_.back(); }
  size_t Available() const { return stack_.size() - Fence(); }

  // The checks below run for every opcode; their failure paths are kept out
  // of line so that the checks themselves inline into the dispatch loop.
  [[gnu::always_inline]] bool Need(size_t n) { return Remaining() >= n || Truncated(n); }
  bool NeedValues(size_t n) { return Available() >= n || Underflow(n); }
  [[gnu::always_inline]] bool Push(PickleNodeId id) {
    if (stack_.size() >= limits_.max_stack) [[unlikely]] {
      return StackFull();
    }
    stack_.push_back(id);
    return true;
  }
  [[gnu::always_inline]] bool PushNew(PickleKind kind, uint64_t bits = 0, uint32_t size = 0) {
    PickleNodeId id;
    if (!builder_.AddScalar(kind, bits, size, id)) [[unlikely]] {
      return TooManyValues();
    }
    return Push(id);
  }
  [[gnu::always_inline]] bool Get(uint64_t index) {
    if (index >= memo_.size() || memo_[index] >= kStreamed) [[unlikely]] {
      return BadGet(index);
    }
    return Push(memo_[index]);
  }
  [[gnu::noinline, gnu::cold]] bool Truncated(size_t n) {
    return Fail(fmt::format("{} needs {} bytes of argument, only {} remain", OpName(), n, Remaining()));
  }
  [[gnu::noinline, gnu::cold]] bool Underflow(size_t n) {
    return Fail(fmt::format("{} needs {} values on the stack, found {}", OpName(), n, Available()));
  }
  [[gnu::noinline, gnu::cold]] bool StackFull() {
    return Fail(fmt::format("more than {} values on the stack; refused", limits_.max_stack));
  }
  [[gnu::noinline, gnu::cold]] bool TooManyValues() {
    return Fail(fmt::format("more than {} values (nodes + elements); refused", max_values_));
  }
  [[gnu::noinline, gnu::cold]] bool BadGet(uint64_t index) {
    if (index < memo_.size() && memo_[index] == kStreamed) {
      return Fail(fmt::format("{} of memo entry {}, a list item already consumed while reading; refused",
                              OpName(), index));
    }
    return Fail(fmt::format("{} of memo entry {}, which was never stored", OpName(), index));
  }

  bool Step(uint8_t op);
  bool StepValue(uint8_t op);
  bool PopToMark();
  bool Refuse(uint8_t op);
  bool Proto();
  bool Frame();
  bool Mark();
  bool Long(size_t length_bytes);
  bool Counted(PickleKind kind, size_t length_bytes, bool is_signed);
  bool BinFloat();
  bool Memoize();
  bool Put(uint64_t index);
  bool PopMark(size_t& mark);
  bool Extend(PickleNodeId container, PickleKind want, const PickleNodeId* items, size_t n);
  bool Built(BuildError e, PickleKind have);
  // The build's extent at a MARK, kept only with a sink: what a batch taken
  // by the sink may discard (list_sink.h).
  struct MarkInfo {
    size_t nodes = 0;
    size_t elements = 0;
    size_t memo_log = 0;
    uint64_t chain_changes = 0;
    uint64_t takes = 0;
    PickleNodeId min_extended = kNoValue;  // the oldest container extended since
  };
  void PopMarkInfo();
  // APPEND / APPENDS: the sink's offer, then the list's Extend when it declines.
  bool AppendItems(PickleNodeId list, const PickleNodeId* items, size_t n, const MarkInfo* batch);
  void MaybeDiscard(const MarkInfo& batch);
  bool Append();
  bool SetItem();
  bool AddToContainerBelowMark(PickleKind want);
  bool BuildFromMark(PickleKind kind);
  bool BuildTuple(size_t n);
  bool Pop();
  bool Dup();
  absl::StatusOr<PickleTree> Stop();

  std::string_view file_name_;
  UnpickleLimits limits_;
  uint64_t max_values_;
  PickleListSink* sink_;
  PickleTreeBuilder builder_;
  const uint8_t* bytes_;
  size_t size_;
  size_t pos_ = 0;
  size_t op_pos_ = 0;
  std::vector<PickleNodeId> stack_;
  std::vector<size_t> marks_;  // stack heights at each open MARK
  std::vector<PickleNodeId> memo_;
  std::vector<MarkInfo> mark_info_;  // parallel to marks_, with a sink only
  MarkInfo popped_;                  // of the MARK PopMark last removed
  std::vector<uint64_t> memo_log_;   // memo indices written, with a sink only
  uint64_t takes_ = 0;
  absl::Status status_;
};

}  // namespace hbmsim::trace::pickle_internal

#endif  // HBMSIM_TRACE_PICKLE_MACHINE_H_
