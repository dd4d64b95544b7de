// The varint decoders of trace/binary/format.h must agree with each
// other and with PutVarint on every length from 1 to 10 bytes, and refuse the
// same malformed inputs: the reader picks one by how many bytes are in view,
// so a disagreement would make a file's meaning depend on block boundaries.
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "trace/binary/format.h"

namespace hbmsim::trace::binary {
namespace {

// Values at both ends of every encoded length, and a few in between.
std::vector<uint64_t> EdgeValues() {
  std::vector<uint64_t> values = {0, 1, 0x7F, ~uint64_t{0}, uint64_t{1} << 63};
  for (int bits = 7; bits < 64; bits += 7) {
    const uint64_t first_of_length = uint64_t{1} << bits;
    values.push_back(first_of_length - 1);
    values.push_back(first_of_length);
    values.push_back(first_of_length | 0x55);
    values.push_back((first_of_length << 6) | 0x2A2A2A2A2A2A2A2Aull >> (64 - bits));
  }
  return values;
}

struct Decoded {
  Decode status;
  uint64_t value;
  size_t consumed;
};

// Decodes `bytes` with one decoder. The unchecked ones may read up to 10
// bytes, so they get padding that is in view but must not be consumed; the
// slow one sees exactly `bytes`, so it can tell that some are missing.
Decoded Run(Decode (Cursor::*decoder)(uint64_t&), const std::vector<uint8_t>& bytes, bool pad = true) {
  std::vector<uint8_t> padded = bytes;
  if (pad) padded.resize(bytes.size() + Cursor::kMaxVarintBytes, 0xEE);
  Cursor c{padded.data(), padded.data(), padded.data() + padded.size()};
  uint64_t v = 0;
  const Decode d = (c.*decoder)(v);
  return {d, v, c.consumed()};
}
Decoded RunUnchecked(const std::vector<uint8_t>& bytes) { return Run(&Cursor::UncheckedVarint, bytes); }
Decoded RunMultiByte(const std::vector<uint8_t>& bytes) {
  return Run(&Cursor::UncheckedMultiByteVarint, bytes);
}
Decoded RunLoop(const std::vector<uint8_t>& bytes) { return Run(&Cursor::LoopVarint, bytes); }
Decoded RunSlow(const std::vector<uint8_t>& bytes) { return Run(&Cursor::SlowVarint, bytes, /*pad=*/false); }

std::vector<uint8_t> Encode(uint64_t v) {
  uint8_t buf[Cursor::kMaxVarintBytes];
  return std::vector<uint8_t>(buf, PutVarint(buf, v));
}

TEST(Varint, EveryDecoderReadsEveryLengthBack) {
  for (uint64_t v : EdgeValues()) {
    const std::vector<uint8_t> bytes = Encode(v);
    for (const Decoded& d : {RunUnchecked(bytes), RunMultiByte(bytes), RunSlow(bytes), RunLoop(bytes)}) {
      ASSERT_EQ(d.status, Decode::kOk) << v;
      EXPECT_EQ(d.value, v);
      EXPECT_EQ(d.consumed, bytes.size()) << v;
    }
  }
}

TEST(Varint, EncodedLengthsAreTheLeb128Ones) {
  EXPECT_EQ(Encode(0x7F).size(), 1u);
  EXPECT_EQ(Encode(0x80).size(), 2u);
  EXPECT_EQ(Encode((uint64_t{1} << 56) - 1).size(), 8u);  // the longest one-load case
  EXPECT_EQ(Encode(uint64_t{1} << 56).size(), 9u);
  EXPECT_EQ(Encode(~uint64_t{0}).size(), 10u);
}

TEST(Varint, NonMinimalEncodingsDecodeToTheirValue) {
  // 0 written on 3 bytes: the decoders do not insist on the shortest form.
  const std::vector<uint8_t> bytes = {0x80, 0x80, 0x00};
  for (const Decoded& d : {RunUnchecked(bytes), RunMultiByte(bytes), RunSlow(bytes), RunLoop(bytes)}) {
    EXPECT_EQ(d.status, Decode::kOk);
    EXPECT_EQ(d.value, 0u);
    EXPECT_EQ(d.consumed, 3u);
  }
}

TEST(Varint, BitsBeyond64AndElevenBytesAreMalformed) {
  std::vector<uint8_t> past_64(9, 0xFF);
  past_64.push_back(0x02);  // the tenth byte may only carry bit 63
  std::vector<uint8_t> eleven(10, 0x80);
  eleven.push_back(0x00);
  for (const auto& bytes : {past_64, eleven}) {
    EXPECT_EQ(RunUnchecked(bytes).status, Decode::kMalformed);
    EXPECT_EQ(RunMultiByte(bytes).status, Decode::kMalformed);
    EXPECT_EQ(RunSlow(bytes).status, Decode::kMalformed);
    EXPECT_EQ(RunLoop(bytes).status, Decode::kMalformed);
  }
}

TEST(Varint, SlowDecoderWaitsForMissingBytes) { EXPECT_EQ(RunSlow({0x80, 0x80}).status, Decode::kNeedMore); }

}  // namespace
}  // namespace hbmsim::trace::binary
