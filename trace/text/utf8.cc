#include "trace/text/utf8.h"

#include <cstdint>

namespace hbmsim::trace {
namespace {

bool IsContinuation(uint8_t b) { return (b & 0xC0) == 0x80; }

// Length of the well-formed sequence starting at s[i], or 0. The ranges of
// the second byte follow RFC 3629's table, which rules out overlong forms and
// surrogates without decoding.
size_t SequenceLength(std::string_view s, size_t i) {
  const uint8_t b0 = static_cast<uint8_t>(s[i]);
  size_t length = 0;
  uint8_t lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + length > s.size()) return 0;
  const uint8_t b1 = static_cast<uint8_t>(s[i + 1]);
  if (b1 < lo || b1 > hi) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (!IsContinuation(static_cast<uint8_t>(s[i + k]))) return 0;
  }
  return length;
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    if (static_cast<uint8_t>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t length = SequenceLength(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string ReplaceInvalidUtf8(std::string_view text) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const size_t length = static_cast<uint8_t>(text[i]) < 0x80 ? 1 : SequenceLength(text, i);
    if (length == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

}  // namespace hbmsim::trace
