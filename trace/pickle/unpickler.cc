#include "trace/pickle/unpickler.h"

#include <bit>
#include <cstdio>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "trace/pickle/opcodes.h"
#include "trace/pickle/tree_builder.h"

namespace hbmsim {
namespace {

constexpr PickleNodeId kNoValue = std::numeric_limits<PickleNodeId>::max();

// Little-endian unsigned integer of `n` <= 8 bytes.
uint64_t LoadLE(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

// A LONG1/LONG4 payload (little-endian two's complement) as the narrowest
// exact kind: int64, uint64, or "big" (kept as bytes) when wider than 64 bits.
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

class Machine {
 public:
  Machine(std::string data, std::string_view file_name, const UnpickleLimits& limits)
      : file_name_(file_name),
        limits_(limits),
        max_values_(limits.max_values != 0 ? limits.max_values : data.size() + 64),
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
    if (index >= memo_.size() || memo_[index] == kNoValue) [[unlikely]] {
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
    return Fail(fmt::format("{} of memo entry {}, which was never stored", OpName(), index));
  }

  bool Step(uint8_t op);
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
  PickleTreeBuilder builder_;
  const uint8_t* bytes_;
  size_t size_;
  size_t pos_ = 0;
  size_t op_pos_ = 0;
  std::vector<PickleNodeId> stack_;
  std::vector<size_t> marks_;  // stack heights at each open MARK
  std::vector<PickleNodeId> memo_;
  absl::Status status_;
};

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
    case '0':
      return Pop();
    case '1': {
      size_t mark;
      if (!PopMark(mark)) return false;
      stack_.resize(mark);
      return true;
    }
    case '2':
      return Dup();
    default:
      return Refuse(op);
  }
}

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
  return true;
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
  return true;
}

bool Machine::PopMark(size_t& mark) {
  if (marks_.empty()) return Fail(fmt::format("{} without a MARK", OpName()));
  mark = marks_.back();
  marks_.pop_back();
  return true;
}

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

}  // namespace

absl::StatusOr<PickleTree> Unpickle(std::string data, std::string_view file_name,
                                    const UnpickleLimits& limits) {
  Machine machine(std::move(data), file_name, limits);
  return machine.Run();
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return absl::NotFoundError(fmt::format("{}: cannot open", path));
  std::string data;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) data.append(buffer, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return absl::InvalidArgumentError(fmt::format("{}: read error", path));
  return data;
}

absl::StatusOr<PickleTree> UnpickleFile(const std::string& path, const UnpickleLimits& limits) {
  absl::StatusOr<std::string> data = ReadWholeFile(path);
  if (!data.ok()) return data.status();
  return Unpickle(*std::move(data), path, limits);
}

}  // namespace hbmsim
