// Profiles built byte by byte: what the reader makes of labels, counts and
// packing, and the one-line error (file, byte offset, what) for each way a
// file can be wrong.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "trace/pprof/device_profile.h"

namespace hbmsim::trace::pprof {
namespace {

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>(0x80 | (v & 0x7f)));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string Int(int field, uint64_t v) { return Varint(uint64_t(field) << 3) + Varint(v); }
std::string Len(int field, const std::string& payload) {
  return Varint((uint64_t(field) << 3) | 2) + Varint(payload.size()) + payload;
}

// The string table every profile here shares.
enum Str { kEmpty, kAllocations, kCount, kSpace, kBytes, kKind, kBuffer, kDevice, kCuda0, kGpu0, kFn, kFile };
std::string Strings() {
  std::string out;
  for (const char* s : {"", "allocations", "count", "space", "bytes", "kind", "buffer", "device", "cuda:0",
                        "gpu:0", "step", "/home/me/train.py"}) {
    out += Len(6, s);
  }
  return out;
}
std::string Header() {
  return Len(1, Int(1, kAllocations) + Int(2, kCount)) + Len(1, Int(1, kSpace) + Int(2, kBytes)) +
         Len(5, Int(1, 1) + Int(2, kFn) + Int(4, kFile)) + Len(4, Int(1, 1) + Len(4, Int(1, 1) + Int(2, 42)));
}
// A buffer sample on `device`, [count, bytes] packed as proto3 writes them.
std::string Sample(uint64_t count, uint64_t bytes, Str device, uint64_t location = 1) {
  return Len(2, Int(1, location) + Len(2, Varint(count) + Varint(bytes)) +
                    Len(3, Int(1, kKind) + Int(2, kBuffer)) + Len(3, Int(1, kDevice) + Int(2, device)));
}

std::string Error(const std::string& bytes) {
  absl::StatusOr<HeldState> held = ParseDeviceProfile(bytes, "p.prof");
  return held.ok() ? "ok" : std::string(held.status().message());
}

TEST(MalformedProfile, AGroupSplitsItsBytesAndLabelsSharingANumberAreNumberedInOrder) {
  absl::StatusOr<HeldState> held =
      ParseDeviceProfile(Sample(3, 10, kGpu0) + Header() + Strings() + Sample(1, 5, kCuda0), "p.prof");
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_EQ(held->devices.size(), 2u);
  // gpu:0 and cuda:0 both say 0: numbered by first appearance instead.
  EXPECT_EQ(held->devices[0].name, "gpu:0");
  EXPECT_EQ(held->devices[0].device, DeviceId(0));
  EXPECT_EQ(held->devices[1].name, "cuda:0");
  EXPECT_EQ(held->devices[1].device, DeviceId(1));
  EXPECT_EQ(held->devices[0].entries[0].count, 3u);
  EXPECT_EQ(held->devices[0].entries[0].bytes, 10);
  const StackFrame& f = held->table.frame(held->table.list(held->devices[0].entries[0].frames)[0]);
  EXPECT_EQ(f.filename, "/home/me/train.py");
  EXPECT_EQ(f.line, 42);
  EXPECT_EQ(f.name, "step");
}

TEST(MalformedProfile, EachFaultNamesItsByteOffset) {
  // The sample comes first, so its payload starts at byte 2.
  EXPECT_EQ(Error(Sample(1, 8, kCuda0, 9) + Header() + Strings()),
            "p.prof: byte offset 2: location 9 is not in the profile");
  EXPECT_EQ(Error(Strings()),
            "p.prof: byte offset 0: not a device memory profile: no sample types allocations/count and "
            "space/bytes");
  const std::string cut = Header() + Strings();
  EXPECT_EQ(Error(cut.substr(0, cut.size() - 3)), "p.prof: byte offset " + std::to_string(cut.size() - 17) +
                                                      ": length 17 runs past the end (14 bytes left)");
  EXPECT_EQ(Error(Header() + Strings() + Len(2, Int(1, 1) + Len(2, Varint(~uint64_t{0}) + Varint(1)))),
            "p.prof: byte offset " + std::to_string(Header().size() + Strings().size() + 2) +
                ": the sample's count is negative (-1)");
  EXPECT_EQ(Error(Header() + Strings() + std::string("\x0f", 1)),
            "p.prof: byte offset " + std::to_string(Header().size() + Strings().size()) +
                ": field 1 has wire type 7: groups (3, 4) are obsolete, 6 and 7 do not exist");
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A sample of a few bytes can claim any count: 2^20 buffers are read, one more is refused.
TEST(MalformedProfile, ASampleClaimingTooManyBuffersIsRefused) {
  const std::string head = Header() + Strings() + Sample(1 << 20, 8, kCuda0);
  EXPECT_EQ(Error(head), "ok");
  EXPECT_EQ(Error(head + Sample(1, 8, kCuda0)), "p.prof: byte offset " + std::to_string(head.size() + 2) +
                                                    ": more than 1048576 allocations in one profile");
}

TEST(MalformedProfile, ACutGzipStreamNamesTheCompressedOffset) {
  const std::string file = ReadFile(std::string(HBMSIM_SHARED_DIR) +
                                    "/jax_tpu/pprof/3DAlgoLab__TinyVLA__6ba9ad949b19__memory.prof");
  ASSERT_EQ(file.size(), 1544u);
  EXPECT_EQ(Error(file.substr(0, 700)), "p.prof: byte offset 700: the gzip stream is cut short");
  std::string corrupt = file;
  corrupt[20] = static_cast<char>(corrupt[20] ^ 0xff);
  EXPECT_NE(Error(corrupt), "ok");
}

}  // namespace
}  // namespace hbmsim::trace::pprof
