// The XSpace reader on a hand-made profile (tests/data/xplane/small.xspace.txt,
// encoded with protoc): stats inline and by reference, number kinds, time,
// and the byte offset of a cut or corrupted file.
#include "trace/xplane/xspace_reader.h"

#include <fstream>
#include <iterator>
#include <string>

#include "gtest/gtest.h"
#include "trace/xplane/memory_profile_json.h"

namespace hbmsim::trace::xplane {
namespace {

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

const std::string kSrc = HBMSIM_SOURCE_DIR;
const std::string kSmall = kSrc + "/tests/data/xplane/small.xplane.pb";

TEST(XSpaceReader, ReadsEveryFieldOfTheHandMadeProfile) {
  const std::string bytes = ReadBytes(kSmall);
  ASSERT_EQ(bytes.size(), 666u);
  EXPECT_TRUE(LooksLikeXSpace(bytes));
  absl::StatusOr<Profile> p = ParseXSpace(bytes, "small.pb");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->form, "xplane");
  EXPECT_EQ(p->framework, Framework::kTensorFlow);  // a tf_Compute thread
  ASSERT_EQ(p->allocators.size(), 1u);
  const AllocatorRecording& a = p->allocators[0];
  EXPECT_EQ(a.name, "GPU_0_bfc");  // by reference in the first record, inline in the others
  EXPECT_EQ(a.allocations, 1);
  EXPECT_EQ(a.deallocations, 2);
  ASSERT_EQ(a.records.size(), 3u);
  const MemoryRecord& r = a.records[0];
  EXPECT_TRUE(r.allocation);
  EXPECT_EQ(r.time_ps, 1000 * 1000 + 2000000);
  EXPECT_EQ(r.addr, 1049600u);
  EXPECT_EQ(r.requested_bytes, 1000);
  EXPECT_EQ(r.allocation_bytes, 1024);
  EXPECT_EQ(r.bytes_allocated, 1536);
  EXPECT_EQ(r.bytes_available, 1046016);
  EXPECT_EQ(r.fragmentation, 0.0);  // an int64 0
  EXPECT_EQ(r.tf_op, "dense/MatMul");
  EXPECT_EQ(r.shape, "[250]");
  EXPECT_EQ(r.data_type, "float");
  EXPECT_EQ(r.where, "planes[0] \"/host:CPU\" lines[0] \"tf_Compute\" events[0]");
  EXPECT_FALSE(a.records[1].allocation);
  EXPECT_EQ(a.records[1].fragmentation, 0.000244678);
  EXPECT_EQ(a.records[1].tf_op, "");
}

TEST(XSpaceReader, ACutFileNamesTheByteOffset) {
  const std::string bytes = ReadBytes(kSmall).substr(0, 300);
  absl::StatusOr<Profile> p = ParseXSpace(bytes, "cut.pb");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(
      std::string(p.status().message()),
      "cut.pb: byte offset 0: not a valid XSpace protobuf: field planes of length 644 runs past the end (297 "
      "bytes left)");
}

TEST(XSpaceReader, AnXSpaceWithoutMemoryEventsIsRefused) {
  // One plane named "/host:CPU" and nothing else.
  const std::string bytes("\x0a\x0b\x12\x09/host:CPU", 13);
  EXPECT_TRUE(LooksLikeXSpace(bytes));
  absl::StatusOr<Profile> p = ParseXSpace(bytes, "empty.pb");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(
      std::string(p.status().message()),
      "empty.pb: byte offset 0: an XSpace with no MemoryAllocation or MemoryDeallocation event (was the "
      "profile recorded on a device with a BFC allocator?)");
}

TEST(XSpaceReader, XlaProtosAndTextAreNotXSpaces) {
  EXPECT_FALSE(LooksLikeXSpace("alloc 1 100\n"));
  EXPECT_FALSE(LooksLikeXSpace(ReadBytes(kSrc + "/tests/data/xla/heap-trace.buffer_assignment.pb")));
  EXPECT_FALSE(LooksLikeXSpace(std::string("\x0a\x02\x08\x01", 4)));
}

TEST(MemoryProfileJson, CorruptGzipNamesTheCompressedByteOffset) {
  std::string gz = ReadBytes(kSrc + "/tests/fuzz/corpus/xplane/small.memory_profile.json.gz");
  ASSERT_GT(gz.size(), 200u);
  EXPECT_TRUE(LooksLikeMemoryProfileJson(gz.substr(0, 256)));
  absl::StatusOr<Profile> cut = ParseMemoryProfile(gz.substr(0, 200), "cut.json.gz");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().message(), "cut.json.gz: byte offset 200: the gzip stream is cut short");
  gz[100] = static_cast<char>(gz[100] ^ 0x55);
  gz[101] = static_cast<char>(gz[101] ^ 0x55);
  absl::StatusOr<Profile> bad = ParseMemoryProfile(gz, "bad.json.gz");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("bad.json.gz: byte offset "), std::string::npos)
      << bad.status();
}

TEST(MemoryProfileJson, BadJsonNamesTheByteOffset) {
  absl::StatusOr<Profile> p =
      ParseMemoryProfile("{\"memoryProfilePerAllocator\": {\"GPU_0_bfc\": [}", "x.json");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(std::string(p.status().message()), "x.json: byte offset 45: not valid JSON");
  absl::StatusOr<Profile> q = ParseMemoryProfile(
      R"({"memoryProfilePerAllocator": {"GPU_0_bfc": {"memoryProfileSnapshots": [{"activityMetadata": {}}]}}})",
      "y.json");
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(std::string(q.status().message()),
            "y.json: memoryProfilePerAllocator.GPU_0_bfc.memoryProfileSnapshots[0]: "
            "activityMetadata.memoryActivity is \"\", not ALLOCATION or DEALLOCATION");
  // A number no double holds (fuzz_xplane: it escaped as nlohmann's out_of_range).
  absl::StatusOr<Profile> r = ParseMemoryProfile(R"({"memoryProfilePerAllocator": 5.481e9510})", "z.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(std::string(r.status().message()), "z.json: byte offset 30: a number too large for a double");
}

}  // namespace
}  // namespace hbmsim::trace::xplane
