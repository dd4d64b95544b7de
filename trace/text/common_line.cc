#include "trace/text/common_line.h"

#include <bit>
#include <cstdint>
#include <cstring>

#include "allocator/core/shape.h"
#include "trace/layer.h"
#include "trace/text/utf8.h"

namespace hbmsim::trace {
namespace {

static_assert(std::endian::native == std::endian::little, "words are read with the first byte lowest");

// A line and a position in it. Every read stays inside [begin, end).
struct Cursor {
  const char* begin;
  const char* p;
  const char* end;
  size_t left() const { return static_cast<size_t>(end - p); }
};

uint64_t LoadWord(const char* at) {
  uint64_t w;
  std::memcpy(&w, at, sizeof(w));
  return w;
}

// The next eight bytes from the cursor as a word, the first byte lowest,
// zeros past the end of the line. Near the end, the line's last eight bytes
// are loaded and shifted (a line of eight bytes or more never needs a byte
// loop); only a shorter line copies what is left.
[[gnu::always_inline]] inline uint64_t Peek8(const Cursor& c) {
  const size_t left = c.left();
  if (left >= 8) return LoadWord(c.p);
  if (left == 0) return 0;
  if (c.end - c.begin >= 8) return LoadWord(c.end - 8) >> (8 * (8 - left));
  uint64_t w = 0;
  std::memcpy(&w, c.p, left);
  return w;
}

// The first `n` (0..8) bytes of a word.
uint64_t FirstBytes(int n) { return n >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * n)) - 1; }

// The high bit of each byte that is not an ASCII digit. After the xor a digit
// is 0..9; adding 0x76 to a byte's low seven bits sets its high bit exactly
// for 10..127 (0x7f + 0x76 < 0x100: no carry into the next byte), and a byte
// with its high bit set keeps it.
uint64_t NonDigitBytes(uint64_t w) {
  const uint64_t x = w ^ 0x3030303030303030;
  return (((x & 0x7f7f7f7f7f7f7f7f) + 0x7676767676767676) | x) & 0x8080808080808080;
}

// The number the first `n` (1..8) bytes of `w` spell, all digits. Shifting
// the rest out leaves zero bytes in front: leading zeros. Then each pair of
// digits, each quad and the two halves are combined, three multiplications.
uint64_t DigitsValue(uint64_t w, int n) {
  uint64_t x = (w ^ 0x3030303030303030) << (8 * (8 - n));
  x = x * 10 + (x >> 8);  // each pair as 10 * first + second, in the second's byte
  constexpr uint64_t kPairs = 0x000000ff000000ff;
  return ((x & kPairs) * (100 + (uint64_t{1000000} << 32)) + ((x >> 16) & kPairs) * (1 + (uint64_t{10000} << 32))) >>
         32;
}

constexpr uint64_t kPow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

// Digits up to a space or the end of the line: 1 to 19 of them (so no
// overflow), as ParsePlainDecimal accepts; anything else is refused.
[[gnu::always_inline]] inline bool TakeNumber(Cursor& c, uint64_t& out) {
  const char* start = c.p;
  uint64_t v = 0;
  while (true) {
    const uint64_t w = Peek8(c);
    const uint64_t others = NonDigitBytes(w);
    const int n = others == 0 ? 8 : std::countr_zero(others) / 8;
    if (n > 0) {
      if (c.p - start + n > 19) return false;
      v = v * kPow10[n] + DigitsValue(w, n);
      c.p += n;
    }
    if (n < 8) break;
  }
  if (c.p == start || (c.p != c.end && *c.p != ' ')) return false;
  out = v;
  return true;
}

// The high bit of the first zero byte, and maybe of bytes after it (the
// borrow only runs upwards, so the lowest set bit is exact). A space is a
// zero byte of the word xor 0x20 in every byte; a byte past the end of the
// line (zero) is then 0x20, never a space.
uint64_t ZeroBytes(uint64_t w) { return (w - 0x0101010101010101) & ~w & 0x8080808080808080; }

// The bytes up to a space or the end of the line; `ascii` says whether all
// of them are below 0x80. False when one of them is NUL: the reader's check
// for NUL bytes (a binary file read as text) only runs on lines this parser
// did not take.
bool TakeValue(Cursor& c, std::string_view& value, bool& ascii) {
  const char* start = c.p;
  uint64_t any = 0;
  uint64_t nul = 0;
  while (true) {
    const uint64_t w = Peek8(c);
    const uint64_t spaces = ZeroBytes(w ^ 0x2020202020202020);
    const int n = spaces != 0 ? std::countr_zero(spaces) / 8 : static_cast<int>(std::min<size_t>(8, c.left()));
    any |= w & FirstBytes(n);
    nul |= ZeroBytes(w) & FirstBytes(n);
    c.p += n;
    if (spaces != 0 || c.p == c.end) break;
  }
  ascii = (any & 0x8080808080808080) == 0;
  value = {start, static_cast<size_t>(c.p - start)};
  return nul == 0;
}

// A word's first bytes compared with a short literal ("alloc ", "tag=").
struct Literal {
  std::string_view text;
  uint64_t word = 0;
  uint64_t mask = 0;
};
constexpr Literal MakeLiteral(std::string_view text) {
  Literal l{text};
  for (size_t i = 0; i < text.size(); ++i) {
    l.word |= uint64_t{static_cast<unsigned char>(text[i])} << (8 * i);
    l.mask |= uint64_t{0xff} << (8 * i);
  }
  return l;
}
bool Starts(uint64_t w, const Literal& l) { return (w & l.mask) == l.word; }

enum Key : uint8_t { kTimeKey, kStreamKey, kDeviceKey, kTagKey, kShapeKey, kKeyCount };
// The key is what precedes a field's first '=', so the prefix "key=" names it.
constexpr Literal kKeys[kKeyCount] = {MakeLiteral("t="), MakeLiteral("stream="), MakeLiteral("device="),
                                      MakeLiteral("tag="), MakeLiteral("shape=")};

bool TakeAttributes(Cursor& c, bool alloc, Event& e) {
  uint8_t seen = 0;
  while (c.p != c.end) {
    if (*c.p++ != ' ') return false;
    const uint64_t w = Peek8(c);
    int key = 0;
    while (key < kKeyCount && !Starts(w, kKeys[key])) ++key;
    if (key == kKeyCount || (seen & (1u << key)) != 0) return false;
    seen |= static_cast<uint8_t>(1u << key);
    c.p += kKeys[key].text.size();
    uint64_t n = 0;
    if (key <= kDeviceKey) {
      if (!TakeNumber(c, n)) return false;
      if (key == kTimeKey) e.time_us = n;
      if (key == kStreamKey) e.stream = StreamId(n);
      if (key == kDeviceKey) e.device = DeviceId(n);
      continue;
    }
    if (!alloc) return false;  // tag= and shape= belong to an alloc
    bool ascii = true;
    std::string_view value;
    if (!TakeValue(c, value, ascii) || value.empty()) return false;
    if (key == kTagKey) {
      if (!ascii && !IsValidUtf8(value)) return false;
      e.tag = value;
    } else {
      absl::StatusOr<TensorShape> shape = ParseShape(value);
      if (!shape.ok()) return false;
      e.shape = std::move(*shape);
    }
  }
  return true;
}

constexpr Literal kAlloc = MakeLiteral("alloc "), kA = MakeLiteral("a "), kFree = MakeLiteral("free "),
                  kF = MakeLiteral("f ");

}  // namespace

bool ParseCommonLine(std::string_view line, Event& e) {
  Cursor c{line.data(), line.data(), line.data() + line.size()};
  const uint64_t w = Peek8(c);
  bool alloc = true;
  if (Starts(w, kAlloc)) {
    c.p += kAlloc.text.size();
  } else if (Starts(w, kA)) {
    c.p += kA.text.size();
  } else if (Starts(w, kFree)) {
    c.p += kFree.text.size();
    alloc = false;
  } else if (Starts(w, kF)) {
    c.p += kF.text.size();
    alloc = false;
  } else {
    return false;
  }
  uint64_t id = 0, bytes = 0;
  if (!TakeNumber(c, id)) return false;
  if (alloc && (c.p == c.end || *c.p++ != ' ' || !TakeNumber(c, bytes))) return false;
  e.device = DeviceId(0);
  e.stream = StreamId(0);
  e.time_us.reset();
  e.addr.reset();
  if (e.shape.has_value()) e.shape.reset();
  e.tag = {};
  e.label = {};
  e.attrs = {};
  if (!TakeAttributes(c, alloc, e)) return false;
  e.kind = alloc ? EventKind::kAlloc : EventKind::kFree;
  e.id = id;
  e.bytes = Bytes(bytes);
  return true;
}

}  // namespace hbmsim::trace
