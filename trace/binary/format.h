// The .hbt binary trace encoding, version 2 (docs/formats/binary-trace.md).
// Reader and writer share these constants and the varint helpers, so the two
// sides cannot disagree about a bit.
//
//   file    = [zstd frames of] stream          (compressed: standard zstd, so
//                                               `zstd -d x.hbtz` gives the .hbt)
//   stream  = magic(8) version(varint) header_flags(u8, 0) metadata event* end
//   metadata= count(varint) { key(str) value(str) }*
//   event   = head(u8) [ext(u8)] fields...
//   end     = 0x0F event_count(varint) crc32(u32, little-endian), then nothing
//             (version 1 files, still read, end after event_count)
//   str     = length(varint) bytes
//
//   head:  bits 0-3 kind (0-7 EventKind, 15 end of trace)
//          0x10 t=   0x20 stream=   0x40 tag=   0x80 an ext byte follows
//   ext:   0x01 device=   0x02 shape=   0x04 addr=   0x08 other attributes
//          (other bits: corrupt)
//
// Fields follow in this order, each only when its kind or flag calls for it:
//   id      buffer events: zigzag(id - previous alloc id); program events:
//           zigzag(id - previous program id); mark: the label (str)
//   bytes   alloc, program_load: varint
//   t=      zigzag(t - previous t)
//   stream= varint          tag=  varint ref: 0 = a str follows, k = dictionary[k-1]
//   device= varint          shape= dtype(u8) rank(varint) dims(varint each)
//   addr=   zigzag(addr - previous addr)
//   other   str: the attributes the text format does not define (Event::attrs,
//           `key=value` fields joined by single spaces), as read
// crc32 is zlib's CRC-32 (the one gzip and PNG use) of every decoded byte
// from the magic through event_count: any corruption the decoder does not
// catch as malformed (one flipped bit in a size) is caught at the end, and a
// compressed file also carries zstd's own frame checksum.
// Deltas are modulo 2^64, so every value round-trips. The tag dictionary is
// built identically on both sides: a literal tag of at most kMaxDictTagBytes
// is appended while the dictionary has fewer than kMaxDictTags entries.
#ifndef HBMSIM_TRACE_BINARY_FORMAT_H_
#define HBMSIM_TRACE_BINARY_FORMAT_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "trace/core/event.h"

namespace hbmsim::trace::binary {

inline constexpr std::string_view kMagic("\x89HBT\r\n\x1a\n", 8);
inline constexpr std::string_view kZstdMagic("\x28\xb5\x2f\xfd", 4);
inline constexpr uint64_t kVersion = 2;            // what the writer writes
inline constexpr uint64_t kOldestVersion = 1;      // version 1: no checksum in the end record
inline constexpr uint64_t kFirstChecksumVersion = 2;
inline constexpr size_t kChecksumBytes = 4;

inline constexpr uint8_t kKindMask = 0x0F;
inline constexpr uint8_t kEndOfTrace = 0x0F;
inline constexpr uint8_t kHasTime = 0x10;
inline constexpr uint8_t kHasStream = 0x20;
inline constexpr uint8_t kHasTag = 0x40;
inline constexpr uint8_t kHasExt = 0x80;
inline constexpr uint8_t kExtDevice = 0x01;
inline constexpr uint8_t kExtShape = 0x02;
inline constexpr uint8_t kExtAddr = 0x04;
inline constexpr uint8_t kExtOther = 0x08;
inline constexpr uint8_t kExtKnown = kExtDevice | kExtShape | kExtAddr | kExtOther;

// Bounds that keep a hostile file from costing memory: a string is capped
// like a text line, metadata as a whole, and a shape's rank.
inline constexpr uint64_t kMaxStringBytes = uint64_t{1} << 20;
inline constexpr uint64_t kMaxMetadataBytes = uint64_t{16} << 20;
inline constexpr uint64_t kMaxRank = 1024;
inline constexpr size_t kMaxDictTags = 4096;
inline constexpr size_t kMaxDictTagBytes = 256;
inline constexpr uint64_t kMaxDType = 18;  // DType::kC128

// The kind codes are the EventKind values; pin them, they are on disk.
static_assert(static_cast<int>(EventKind::kAlloc) == 0 && static_cast<int>(EventKind::kMark) == 7);

inline uint64_t ZigZag(uint64_t delta) {
  return (delta << 1) ^ static_cast<uint64_t>(static_cast<int64_t>(delta) >> 63);
}
inline uint64_t UnZigZag(uint64_t z) { return (z >> 1) ^ (~(z & 1) + 1); }

// Appends the LEB128 varint of `v` at `out` (room for 10 bytes); returns the end.
inline uint8_t* PutVarint(uint8_t* out, uint64_t v) {
  while (v >= 0x80) {
    *out++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<uint8_t>(v);
  return out;
}

enum class Decode : uint8_t { kOk, kNeedMore, kMalformed };

// Returns from a decoding function with the first step that is not kOk.
#define HBT_TRY(expr)                                           \
  do {                                                          \
    if (const Decode d_ = (expr); d_ != Decode::kOk) return d_; \
  } while (0)

// A bounds-checked view of decoded bytes. Every getter either succeeds or
// reports why not, never reading past `end`.
struct Cursor {
  static constexpr int kMaxVarintBytes = 10;

  const uint8_t* begin;
  const uint8_t* p;
  const uint8_t* end;

  size_t consumed() const { return static_cast<size_t>(p - begin); }

  Decode Byte(uint8_t& v) {
    if (p == end) return Decode::kNeedMore;
    v = *p++;
    return Decode::kOk;
  }
  Decode Varint(uint64_t& v) {
    if (p != end && *p < 0x80) {  // the common one-byte case
      v = *p++;
      return Decode::kOk;
    }
    if (end - p >= kMaxVarintBytes) return UncheckedVarint(v);
    return SlowVarint(v);
  }
  // A varint with all of its possible bytes in view: no bounds checks. One
  // byte is the common case; up to eight are decoded from one 64-bit load
  // without a loop (the stop byte found by its clear top bit, the 7-bit
  // groups packed in three steps); nine and ten bytes take the loop.
  Decode UncheckedVarint(uint64_t& v) {
    const uint64_t b0 = p[0];
    if (b0 < 0x80) [[likely]] {
      ++p;
      v = b0;
      return Decode::kOk;
    }
    return UncheckedMultiByteVarint(v);
  }
  // The same without the one-byte test, for fields whose length varies from
  // record to record (sizes): there that test is a mispredicted branch, and
  // the word decode handles one byte as well.
  Decode UncheckedMultiByteVarint(uint64_t& v) {
    if constexpr (std::endian::native == std::endian::little) {
      uint64_t word;
      std::memcpy(&word, p, sizeof(word));
      const uint64_t stops = ~word & 0x8080808080808080ull;
      if (stops != 0) [[likely]] {
        // Every bit up to the stop byte's top bit, minus the flag bits.
        uint64_t x = word & (stops ^ (stops - 1)) & 0x7F7F7F7F7F7F7F7Full;
        x = (x & 0x007F007F007F007Full) | ((x & 0x7F007F007F007F00ull) >> 1);
        x = (x & 0x00003FFF00003FFFull) | ((x & 0x3FFF00003FFF0000ull) >> 2);
        x = (x & 0x000000000FFFFFFFull) | ((x & 0x0FFFFFFF00000000ull) >> 4);
        p += (std::countr_zero(stops) >> 3) + 1;
        v = x;
        return Decode::kOk;
      }
    }
    return LoopVarint(v);
  }
  Decode LoopVarint(uint64_t& v) {
    uint64_t result = 0;
    for (int i = 0; i < kMaxVarintBytes - 1; ++i) {
      const uint64_t b = p[i];
      result |= (b & 0x7F) << (7 * i);
      if (b < 0x80) {
        p += i + 1;
        v = result;
        return Decode::kOk;
      }
    }
    const uint64_t last = p[kMaxVarintBytes - 1];
    if (last > 1) return Decode::kMalformed;  // beyond 64 bits, or more than 10 bytes
    p += kMaxVarintBytes;
    v = result | (last << 63);
    return Decode::kOk;
  }
  Decode SlowVarint(uint64_t& v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (p + shift / 7 >= end) return Decode::kNeedMore;
      const uint8_t b = p[shift / 7];
      if (shift == 63 && b > 1) return Decode::kMalformed;  // beyond 64 bits
      result |= uint64_t{b & 0x7Fu} << shift;
      if (b < 0x80) {
        p += shift / 7 + 1;
        v = result;
        return Decode::kOk;
      }
    }
    return Decode::kMalformed;  // more than 10 bytes
  }
  // `n` raw bytes as a view; the caller has checked n against its cap.
  Decode Bytes(uint64_t n, std::string_view& out) {
    if (static_cast<uint64_t>(end - p) < n) return Decode::kNeedMore;
    out = std::string_view(reinterpret_cast<const char*>(p), n);
    p += n;
    return Decode::kOk;
  }
};

}  // namespace hbmsim::trace::binary

#endif  // HBMSIM_TRACE_BINARY_FORMAT_H_
