#include "trace/pickle/pickle_writer.h"

#include <bit>
#include <cstring>
#include <string>

#include "trace/text/utf8.h"

namespace hbmsim::trace {
namespace {

// Opcodes of pickle protocol 4 (CPython Lib/pickle.py).
constexpr uint8_t kProto = 0x80, kStop = '.', kNone = 'N', kNewTrue = 0x88, kNewFalse = 0x89;
constexpr uint8_t kBinInt1 = 'K', kBinInt2 = 'M', kBinInt = 'J', kLong1 = 0x8a, kBinFloat = 'G';
constexpr uint8_t kShortBinUnicode = 0x8c, kBinUnicode = 'X';
constexpr uint8_t kEmptyList = ']', kAppends = 'e', kEmptyDict = '}', kSetItems = 'u', kMark = '(';
constexpr uint8_t kTuple2 = 0x86;
constexpr uint8_t kMemoize = 0x94, kBinGet = 'h', kLongBinGet = 'j';

}  // namespace

PickleWriter::PickleWriter() {
  Op(kProto);
  Op(4);
}

void PickleWriter::Raw(uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void PickleWriter::Done() {
  if (open_.empty()) return;
  Frame& f = open_.back();
  ++f.pending;
  const uint32_t full = f.kind == Open::kDict ? 2 * kBatch : kBatch;
  if (f.kind == Open::kTuple || f.pending < full) return;
  Op(f.kind == Open::kDict ? kSetItems : kAppends);
  Op(kMark);
  f.pending = 0;
}

void PickleWriter::None() {
  Op(kNone);
  Done();
}

void PickleWriter::Bool(bool v) {
  Op(v ? kNewTrue : kNewFalse);
  Done();
}

void PickleWriter::Int(int64_t v) {
  if (v >= 0 && v < 256) {
    Op(kBinInt1);
    Raw(static_cast<uint64_t>(v), 1);
  } else if (v >= 0 && v < 65536) {
    Op(kBinInt2);
    Raw(static_cast<uint64_t>(v), 2);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    Op(kBinInt);
    Raw(static_cast<uint64_t>(static_cast<uint32_t>(static_cast<int32_t>(v))), 4);
  } else {
    // LONG1: the shortest little-endian two's complement that keeps the sign.
    int n = 8;
    const uint64_t u = static_cast<uint64_t>(v);
    while (n > 1) {
      const int64_t shifted = v >> (8 * (n - 1) - 1);
      if (shifted != 0 && shifted != -1) break;
      --n;
    }
    Op(kLong1);
    Op(static_cast<uint8_t>(n));
    Raw(u, n);
  }
  Done();
}

void PickleWriter::UInt(uint64_t v) {
  if (v <= static_cast<uint64_t>(INT64_MAX)) return Int(static_cast<int64_t>(v));
  // Needs a ninth, zero byte so the top bit does not read as a sign.
  Op(kLong1);
  Op(9);
  Raw(v, 8);
  Op(0);
  Done();
}

void PickleWriter::Float(double v) {
  Op(kBinFloat);
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  for (int i = 7; i >= 0; --i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));  // big endian
  Done();
}

void PickleWriter::String(std::string_view utf8) {
  // Python's unpickler refuses a BINUNICODE that is not UTF-8, and the text
  // may come from a user's input: written as U+FFFD, as JSON outputs do.
  if (!IsValidUtf8(utf8)) {
    const std::string repaired = ReplaceInvalidUtf8(utf8);
    return String(repaired);
  }
  if (utf8.size() < 256) {
    Op(kShortBinUnicode);
    Raw(utf8.size(), 1);
  } else {
    Op(kBinUnicode);
    Raw(utf8.size(), 4);
  }
  out_.append(utf8);
  Done();
}

void PickleWriter::BeginList() {
  Op(kEmptyList);
  Op(kMark);
  open_.push_back({Open::kList});
}

void PickleWriter::EndList() {
  Op(kAppends);
  open_.pop_back();
  Done();
}

// MEMOIZE must see the list on top of the stack, so it comes before Done()
// (which may close the parent's batch and pop the list into it).
uint32_t PickleWriter::EndListShared() {
  Op(kAppends);
  open_.pop_back();
  Op(kMemoize);
  Done();
  return memo_++;
}

void PickleWriter::Get(uint32_t index) {
  if (index < 256) {
    Op(kBinGet);
    Raw(index, 1);
  } else {
    Op(kLongBinGet);
    Raw(index, 4);
  }
  Done();
}

void PickleWriter::BeginDict() {
  Op(kEmptyDict);
  Op(kMark);
  open_.push_back({Open::kDict});
}

void PickleWriter::EndDict() {
  Op(kSetItems);
  open_.pop_back();
  Done();
}

void PickleWriter::BeginTuple2() { open_.push_back({Open::kTuple}); }

void PickleWriter::EndTuple2() {
  Op(kTuple2);
  open_.pop_back();
  Done();
}

std::string PickleWriter::Finish() {
  Op(kStop);
  std::string out = std::move(out_);
  out_.clear();
  open_.clear();
  memo_ = 0;
  return out;
}

}  // namespace hbmsim::trace
