// Tiny helpers that author pickle bytes by hand, so the tests can build
// hostile inputs (and the exact opcode sequences CPython emits) without
// needing python at run time.
#ifndef HBMSIM_TESTS_PICKLE_PICKLE_BYTES_H_
#define HBMSIM_TESTS_PICKLE_PICKLE_BYTES_H_

#include <bit>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace hbmsim::pickle_bytes {

inline std::string Op(uint8_t op) { return std::string(1, static_cast<char>(op)); }

// `n` little-endian bytes of `v`.
inline std::string LE(uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

inline std::string RawBytes(std::initializer_list<uint8_t> b) { return std::string(b.begin(), b.end()); }

inline std::string Proto(uint8_t v) { return Op(0x80) + Op(v); }
inline std::string Frame(uint64_t n) { return Op(0x95) + LE(n, 8); }
inline const std::string kMark = "(";
inline const std::string kStop = ".";
inline const std::string kEmptyList = "]";
inline const std::string kEmptyDict = "}";
inline const std::string kEmptyTuple = ")";
inline const std::string kAppend = "a";
inline const std::string kAppends = "e";
inline const std::string kSetItem = "s";
inline const std::string kSetItems = "u";
inline const std::string kNone = "N";
inline const std::string kMemoize = Op(0x94);
inline const std::string kTuple2 = Op(0x86);
inline const std::string kNewTrue = Op(0x88);

inline std::string ShortUnicode(std::string_view s) {
  return Op(0x8c) + Op(static_cast<uint8_t>(s.size())) + std::string(s);
}
inline std::string BinUnicode(std::string_view s) { return "X" + LE(s.size(), 4) + std::string(s); }
inline std::string BinInt(int32_t v) { return "J" + LE(static_cast<uint32_t>(v), 4); }
inline std::string BinInt1(uint8_t v) { return "K" + Op(v); }
inline std::string BinInt2(uint16_t v) { return "M" + LE(v, 2); }
inline std::string Long1(std::string_view payload) {
  return Op(0x8a) + Op(static_cast<uint8_t>(payload.size())) + std::string(payload);
}
inline std::string Long4(std::string_view payload) {
  return Op(0x8b) + LE(payload.size(), 4) + std::string(payload);
}
inline std::string BinFloat(double d) {
  const uint64_t bits = std::bit_cast<uint64_t>(d);
  std::string s = "G";
  for (int i = 7; i >= 0; --i) s.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  return s;
}
inline std::string BinGet(uint8_t i) { return "h" + Op(i); }
inline std::string LongBinGet(uint32_t i) { return "j" + LE(i, 4); }
inline std::string BinPut(uint8_t i) { return "q" + Op(i); }
inline std::string LongBinPut(uint32_t i) { return "r" + LE(i, 4); }

// `s` repeated `n` times.
inline std::string Repeat(std::string_view s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out.append(s);
  return out;
}

}  // namespace hbmsim::pickle_bytes

#endif  // HBMSIM_TESTS_PICKLE_PICKLE_BYTES_H_
