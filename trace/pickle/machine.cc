// The dispatch loop.
#include "trace/pickle/machine.h"

namespace hbmsim::trace::pickle_internal {

absl::StatusOr<PickleTree> Machine::Run() {
  stack_.reserve(4096);
  memo_.reserve(size_ / 16);
  while (pos_ < size_) {
    op_pos_ = pos_;
    const uint8_t op = bytes_[pos_++];
    // Memo gets are ~70% of a snapshot's opcodes. Testing for them before the
    // switch turns most dispatches into well-predicted conditional branches
    // instead of one indirect jump that mispredicts (measured: bench/pickle).
    if (op == 'j' && Remaining() >= 4) {
      pos_ += 4;
      if (!Get(LoadLE(bytes_ + pos_ - 4, 4))) return status_;
      continue;
    }
    if (op == 'h' && Remaining() >= 1) {
      if (!Get(bytes_[pos_++])) return status_;
      continue;
    }
    if (op == '.') return Stop();
    if (!Step(op)) return status_;
  }
  op_pos_ = size_;
  return absl::InvalidArgumentError(fmt::format("{}: byte {}: file ends before STOP", file_name_, size_));
}

// The opcodes that move values between the stack, the memo and containers;
// the ones that push a new value are StepValue's.
bool Machine::Step(uint8_t op) {
  switch (op) {
    case 'h':  // BINGET
      if (!Need(1)) return false;
      return Get(bytes_[pos_++]);
    case 'j':  // LONG_BINGET
      if (!Need(4)) return false;
      pos_ += 4;
      return Get(LoadLE(bytes_ + pos_ - 4, 4));
    case 0x94:  // MEMOIZE
      return Memoize();
    case 'q':  // BINPUT
      if (!Need(1)) return false;
      return Put(bytes_[pos_++]);
    case 'r':  // LONG_BINPUT
      if (!Need(4)) return false;
      pos_ += 4;
      return Put(LoadLE(bytes_ + pos_ - 4, 4));
    case '(':
      return Mark();
    case '}':
      return PushNew(PickleKind::kDict);
    case ']':
      return PushNew(PickleKind::kList);
    case ')':
      return PushNew(PickleKind::kTuple);
    case 'u':
      return AddToContainerBelowMark(PickleKind::kDict);
    case 'e':
      return AddToContainerBelowMark(PickleKind::kList);
    case 'a':
      return Append();
    case 's':
      return SetItem();
    case 'l':
      return BuildFromMark(PickleKind::kList);
    case 't':
      return BuildFromMark(PickleKind::kTuple);
    case 'd':
      return BuildFromMark(PickleKind::kDict);
    case 0x85:
      return BuildTuple(1);
    case 0x86:
      return BuildTuple(2);
    case 0x87:
      return BuildTuple(3);
    case '0':
      return Pop();
    case '1':  // POP_MARK
      return PopToMark();
    case '2':
      return Dup();
    default:
      return StepValue(op);
  }
}

// The opcodes that push a new value: numbers, strings, None, booleans; and
// the protocol and frame headers.
bool Machine::StepValue(uint8_t op) {
  switch (op) {
    case 'K':  // BININT1
      if (!Need(1)) return false;
      return PushNew(PickleKind::kInt, bytes_[pos_++]);
    case 'M':  // BININT2
      if (!Need(2)) return false;
      pos_ += 2;
      return PushNew(PickleKind::kInt, LoadLE(bytes_ + pos_ - 2, 2));
    case 'J': {  // BININT: signed 32-bit
      if (!Need(4)) return false;
      const int32_t v = static_cast<int32_t>(LoadLE(bytes_ + pos_, 4));
      pos_ += 4;
      return PushNew(PickleKind::kInt, static_cast<uint64_t>(int64_t{v}));
    }
    case 0x8a:
      return Long(1);
    case 0x8b:
      return Long(4);
    case 'G':
      return BinFloat();
    case 0x8c:
      return Counted(PickleKind::kString, 1, false);  // SHORT_BINUNICODE
    case 'X':
      return Counted(PickleKind::kString, 4, false);  // BINUNICODE
    case 0x8d:
      return Counted(PickleKind::kString, 8, false);  // BINUNICODE8
    case 'U':
    case 'C':
      return Counted(PickleKind::kBytes, 1, false);  // SHORT_BINSTRING, SHORT_BINBYTES
    case 'T':
      return Counted(PickleKind::kBytes, 4, true);  // BINSTRING
    case 'B':
      return Counted(PickleKind::kBytes, 4, false);  // BINBYTES
    case 0x8e:
    case 0x96:
      return Counted(PickleKind::kBytes, 8, false);  // BINBYTES8, BYTEARRAY8
    case 'N':
      return PushNew(PickleKind::kNone);
    case 0x88:
      return PushNew(PickleKind::kBool, 1);
    case 0x89:
      return PushNew(PickleKind::kBool, 0);
    case 0x80:
      return Proto();
    case 0x95:
      return Frame();
    default:
      return Refuse(op);
  }
}

bool Machine::PopToMark() {
  size_t mark;
  if (!PopMark(mark)) return false;
  stack_.resize(mark);
  return true;
}

}  // namespace hbmsim::trace::pickle_internal
