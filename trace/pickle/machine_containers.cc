// Opcodes that build and fill containers, and the stack discipline around
// them (MARK, POP, DUP, STOP).
#include "trace/pickle/machine.h"

namespace hbmsim::pickle_internal {

bool Machine::Extend(PickleNodeId container, PickleKind want, const PickleNodeId* items, size_t n) {
  const PickleKind have = builder_.kind(container);
  if (have != want) {
    return Fail(
        fmt::format("{} into a {} (expects a {})", OpName(), PickleKindName(have), PickleKindName(want)));
  }
  switch (builder_.Extend(container, items, n)) {
    case BuildError::kOk:
      return true;
    case BuildError::kFrozen:
      return Fail(
          fmt::format("{} changes a {} that is already inside another container (a cyclic object); refused",
                      OpName(), PickleKindName(have)));
    case BuildError::kSelf:
      return Fail(fmt::format("{} puts a {} inside itself (a cyclic object); refused", OpName(),
                              PickleKindName(have)));
    case BuildError::kTooDeep:
      return Fail(fmt::format("containers nest deeper than {} levels; refused", limits_.max_nesting));
    case BuildError::kTooManyValues:
      return TooManyValues();
    case BuildError::kTooLarge:
      return Fail(fmt::format("{} makes a {} of more than 4294967295 elements; refused", OpName(),
                              PickleKindName(have)));
  }
  return false;
}

bool Machine::Append() {
  if (!NeedValues(2)) return false;
  const PickleNodeId item = stack_.back();
  stack_.pop_back();
  return Extend(stack_.back(), PickleKind::kList, &item, 1);
}

bool Machine::SetItem() {
  if (!NeedValues(3)) return false;
  const PickleNodeId pair[2] = {stack_[stack_.size() - 2], stack_.back()};
  stack_.resize(stack_.size() - 2);
  return Extend(stack_.back(), PickleKind::kDict, pair, 2);
}

// APPENDS / SETITEMS: the container sits just below the MARK.
bool Machine::AddToContainerBelowMark(PickleKind want) {
  size_t mark;
  if (!PopMark(mark)) return false;
  if (mark <= Fence()) return Fail(fmt::format("{} has no container below its MARK", OpName()));
  const size_t n = stack_.size() - mark;
  if (want == PickleKind::kDict && n % 2 != 0) {
    return Fail(fmt::format("{} with an odd number of values ({})", OpName(), n));
  }
  if (!Extend(stack_[mark - 1], want, stack_.data() + mark, n)) return false;
  stack_.resize(mark);
  return true;
}

// LIST / TUPLE / DICT: a new container of everything above the MARK.
bool Machine::BuildFromMark(PickleKind kind) {
  size_t mark;
  if (!PopMark(mark)) return false;
  const size_t n = stack_.size() - mark;
  if (kind == PickleKind::kDict && n % 2 != 0) {
    return Fail(fmt::format("{} with an odd number of values ({})", OpName(), n));
  }
  PickleNodeId id;
  if (!builder_.AddContainer(kind, id)) return TooManyValues();
  if (!Extend(id, kind, stack_.data() + mark, n)) return false;
  stack_.resize(mark);
  return Push(id);
}

bool Machine::BuildTuple(size_t n) {
  if (!NeedValues(n)) return false;
  PickleNodeId id;
  if (!builder_.AddContainer(PickleKind::kTuple, id)) return TooManyValues();
  const size_t first = stack_.size() - n;
  if (!Extend(id, PickleKind::kTuple, stack_.data() + first, n)) return false;
  stack_.resize(first);
  return Push(id);
}

// POP discards the top value, or the last MARK when nothing is above it.
bool Machine::Pop() {
  if (Available() > 0) {
    stack_.pop_back();
    return true;
  }
  if (!marks_.empty()) {
    marks_.pop_back();
    return true;
  }
  return NeedValues(1);
}

bool Machine::Dup() {
  if (!NeedValues(1)) return false;
  return Push(stack_.back());
}

absl::StatusOr<PickleTree> Machine::Stop() {
  if (!marks_.empty()) {
    Fail(fmt::format("STOP with {} MARKs still open", marks_.size()));
    return status_;
  }
  if (stack_.size() != 1) {
    Fail(fmt::format("STOP with {} values on the stack (expects 1)", stack_.size()));
    return status_;
  }
  return builder_.Finish(stack_.back());
}

}  // namespace hbmsim::pickle_internal
