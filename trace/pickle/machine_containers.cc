// Opcodes that build and fill containers, and the stack discipline around
// them (MARK, POP, DUP, STOP).
#include <algorithm>

#include "trace/pickle/machine.h"

namespace hbmsim::trace::pickle_internal {

bool Machine::Extend(PickleNodeId container, PickleKind want, const PickleNodeId* items, size_t n) {
  const PickleKind have = builder_.kind(container);
  if (have != want) {
    return Fail(
        fmt::format("{} into a {} (expects a {})", OpName(), PickleKindName(have), PickleKindName(want)));
  }
  if (!mark_info_.empty()) mark_info_.back().min_extended = std::min(mark_info_.back().min_extended, container);
  return Built(builder_.Extend(container, items, n), have);
}

bool Machine::Built(BuildError e, PickleKind have) {
  switch (e) {
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
  return AppendItems(stack_.back(), &item, 1, nullptr);
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
  if (want == PickleKind::kList) {
    if (!AppendItems(stack_[mark - 1], stack_.data() + mark, n, &popped_)) return false;
  } else if (!Extend(stack_[mark - 1], want, stack_.data() + mark, n)) {
    return false;
  }
  stack_.resize(mark);
  // Every few MB, the bytes behind us may leave memory (pickle_bytes.h).
  builder_.ReleaseData(op_pos_);
  return true;
}

bool Machine::AppendItems(PickleNodeId list, const PickleNodeId* items, size_t n, const MarkInfo* batch) {
  if (sink_ == nullptr || n == 0 || builder_.kind(list) != PickleKind::kList) {
    return Extend(list, PickleKind::kList, items, n);
  }
  for (size_t i = 0; i < n; ++i) builder_.Seal(items[i]);  // so the sink reads finished values
  if (!sink_->Take(builder_.partial(), list, items, n)) return Extend(list, PickleKind::kList, items, n);
  ++takes_;
  if (!mark_info_.empty()) mark_info_.back().min_extended = std::min(mark_info_.back().min_extended, list);
  if (!Built(builder_.Absorb(list, items, n), PickleKind::kList)) return false;
  if (batch != nullptr) MaybeDiscard(*batch);
  return true;
}

// Discards what the batch since its MARK built when only its taken items
// can reach it (list_sink.h): no memo entry into it but the items', no older
// container extended meanwhile (min_extended), no chain started or sealed
// (their ranges may live in it), no other batch taken inside it.
void Machine::MaybeDiscard(const MarkInfo& batch) {
  if (batch.takes + 1 != takes_ || batch.min_extended < batch.nodes ||
      batch.chain_changes != builder_.chain_changes()) {
    return;
  }
  for (size_t i = batch.memo_log; i < memo_log_.size(); ++i) {
    const PickleNodeId v = memo_[memo_log_[i]];
    if (v >= batch.nodes && v < kStreamed && !builder_.is_taken(v)) return;
  }
  size_t keep = batch.memo_log;
  for (size_t i = batch.memo_log; i < memo_log_.size(); ++i) {
    PickleNodeId& v = memo_[memo_log_[i]];
    if (v >= batch.nodes && v < kStreamed) {
      v = kStreamed;
    } else {
      memo_log_[keep++] = memo_log_[i];
    }
  }
  memo_log_.resize(keep);
  builder_.Truncate(batch.nodes, batch.elements);
  sink_->Dropped(static_cast<PickleNodeId>(batch.nodes));
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
    PopMarkInfo();
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

}  // namespace hbmsim::trace::pickle_internal
