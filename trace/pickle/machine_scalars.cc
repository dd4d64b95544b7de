// Opcodes that push scalars, and the ones about the stream itself (PROTO,
// FRAME, memo, refusals).
#include <limits>

#include <algorithm>

#include "trace/pickle/machine.h"

namespace hbmsim::trace::pickle_internal {
namespace {

struct DecodedLong {
  PickleKind kind;
  uint64_t bits;
};
DecodedLong DecodeLong(const uint8_t* p, size_t n) {
  if (n == 0) return {PickleKind::kInt, 0};
  const bool negative = (p[n - 1] & 0x80) != 0;
  if (n <= 8) {
    uint64_t v = LoadLE(p, n);
    if (negative && n < 8) v |= ~uint64_t{0} << (8 * n);  // sign-extend
    return {PickleKind::kInt, v};
  }
  const uint8_t fill = negative ? 0xff : 0x00;
  for (size_t i = 8; i < n; ++i) {
    if (p[i] != fill) return {PickleKind::kBigInt, 0};
  }
  const uint64_t low = LoadLE(p, 8);
  const bool low_negative = (low >> 63) != 0;
  if (low_negative == negative) return {PickleKind::kInt, low};
  if (!negative) return {PickleKind::kUInt, low};  // in [2^63, 2^64)
  return {PickleKind::kBigInt, 0};                 // below -2^63
}

}  // namespace

bool Machine::Refuse(uint8_t op) {
  const OpcodeInfo& info = GetOpcodeInfo(op);
  switch (info.cls) {
    case OpcodeClass::kCode:
      return Fail(fmt::format("opcode {} {}; refused", info.name, info.why));
    case OpcodeClass::kUnsupported:
      return Fail(fmt::format("opcode {} {}, which snapshots never use; not supported", info.name, info.why));
    default:
      return Fail(fmt::format("unknown opcode 0x{:02x}", op));
  }
}

bool Machine::Proto() {
  if (!Need(1)) return false;
  const unsigned version = bytes_[pos_++];
  if (version < 2 || version > 5) {
    return Fail(fmt::format("pickle protocol {} is not supported (only 2 to 5)", version));
  }
  return true;
}

// Frames only group opcodes for buffered reading; the whole file is in memory,
// so a frame is checked against the file and otherwise ignored.
bool Machine::Frame() {
  if (!Need(8)) return false;
  const uint64_t length = LoadLE(bytes_ + pos_, 8);
  pos_ += 8;
  if (length > Remaining()) {
    return Fail(fmt::format("FRAME declares {} bytes but only {} remain", length, Remaining()));
  }
  return true;
}

bool Machine::Mark() {
  if (marks_.size() >= limits_.max_marks) {
    return Fail(fmt::format("more than {} MARKs open at once; refused", limits_.max_marks));
  }
  marks_.push_back(stack_.size());
  if (sink_ != nullptr) {
    mark_info_.push_back(MarkInfo{builder_.node_count(), builder_.element_count(), memo_log_.size(),
                                  builder_.chain_changes(), takes_, kNoValue});
  }
  return true;
}

void Machine::PopMarkInfo() {
  if (mark_info_.empty()) return;
  popped_ = mark_info_.back();
  mark_info_.pop_back();
  if (!mark_info_.empty()) {
    mark_info_.back().min_extended = std::min(mark_info_.back().min_extended, popped_.min_extended);
  }
}

bool Machine::Long(size_t length_bytes) {
  if (!Need(length_bytes)) return false;
  const uint64_t raw = LoadLE(bytes_ + pos_, length_bytes);
  pos_ += length_bytes;
  // LONG4's length is a signed 32-bit count.
  if (length_bytes == 4 && (raw >> 31) != 0) return Fail(fmt::format("LONG4 with negative length"));
  if (raw > Remaining()) {
    return Fail(fmt::format("{} declares {} bytes but only {} remain", OpName(), raw, Remaining()));
  }
  const size_t start = pos_;
  pos_ += raw;
  const DecodedLong v = DecodeLong(bytes_ + start, raw);
  if (v.kind == PickleKind::kBigInt) return PushNew(PickleKind::kBigInt, start, static_cast<uint32_t>(raw));
  return PushNew(v.kind, v.bits);
}

bool Machine::Counted(PickleKind kind, size_t length_bytes, bool is_signed) {
  if (!Need(length_bytes)) return false;
  const uint64_t length = LoadLE(bytes_ + pos_, length_bytes);
  pos_ += length_bytes;
  if (is_signed && (length >> 31) != 0) return Fail(fmt::format("{} with negative length", OpName()));
  if (length > Remaining()) {
    return Fail(fmt::format("{} declares {} bytes but only {} remain", OpName(), length, Remaining()));
  }
  if (length > std::numeric_limits<uint32_t>::max()) {
    return Fail(fmt::format("{} of {} bytes is longer than this reader supports (4 GiB)", OpName(), length));
  }
  const size_t start = pos_;
  pos_ += length;
  return PushNew(kind, start, static_cast<uint32_t>(length));
}

bool Machine::BinFloat() {
  if (!Need(8)) return false;
  uint64_t bits = 0;
  for (size_t i = 0; i < 8; ++i) bits = (bits << 8) | bytes_[pos_ + i];  // big-endian
  pos_ += 8;
  return PushNew(PickleKind::kFloat, bits);
}

bool Machine::Memoize() {
  if (!NeedValues(1)) return false;
  if (sink_ != nullptr) memo_log_.push_back(memo_.size());
  memo_.push_back(stack_.back());
  return true;
}

bool Machine::Put(uint64_t index) {
  if (!NeedValues(1)) return false;
  if (index >= memo_.size()) {
    // Picklers number memo entries 0, 1, 2...; an index beyond the file's
    // length cannot come from one and would only make us allocate.
    if (index >= size_) {
      return Fail(fmt::format("{} to memo entry {}, beyond any memo this file could fill", OpName(), index));
    }
    memo_.resize(index + 1, kNoValue);
  }
  memo_[index] = stack_.back();
  if (sink_ != nullptr) memo_log_.push_back(index);
  return true;
}

bool Machine::PopMark(size_t& mark) {
  if (marks_.empty()) return Fail(fmt::format("{} without a MARK", OpName()));
  mark = marks_.back();
  marks_.pop_back();
  PopMarkInfo();
  return true;
}

}  // namespace hbmsim::trace::pickle_internal
