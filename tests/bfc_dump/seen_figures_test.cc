// What `diagnose` tells about each real dump in shared/bfc_dumps even when the
// dump is partial: every figure the file shows, read off the file by hand
// (line numbers are the file's), each marked seen or derived.
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "test_util.h"
#include "trace/bfc_dump/render.h"

namespace hbmsim::bfc_dump {
namespace {

std::vector<Diagnosis> DiagnoseShared(const std::string& file) { return DiagnoseAll(LoadSharedDump(file)); }

const Figure* Find(const Diagnosis& d, std::string_view what) {
  for (const Figure& f : d.figures) {
    if (f.what == what) return &f;
  }
  return nullptr;
}

void ExpectSeen(const Diagnosis& d, std::string_view what, std::string_view value, int line) {
  const Figure* f = Find(d, what);
  ASSERT_NE(f, nullptr) << "no figure " << what;
  EXPECT_EQ(f->value, value) << what;
  EXPECT_FALSE(f->derived) << what;
  EXPECT_EQ(f->line, line) << what;
}

void ExpectDerived(const Diagnosis& d, std::string_view what, std::string_view value) {
  const Figure* f = Find(d, what);
  ASSERT_NE(f, nullptr) << "no figure " << what;
  EXPECT_EQ(f->value, value) << what;
  EXPECT_TRUE(f->derived) << what;
}

TEST(SeenFiguresTest, Dump01LimitFromTheDeviceLine) {
  const std::vector<Diagnosis> d = DiagnoseShared("01.txt");
  ASSERT_EQ(d.size(), 1u);
  ExpectSeen(d[0], "request", "18.00MiB (rounded to 18874368), requested by op Mul", 9);
  ExpectSeen(d[0], "device", "GPU:0 with 67 MB memory", 8);
  ExpectDerived(d[0], "memory limit",
                "at least 70254592 (67.00MiB): TF prints the limit in MiB, rounded down, and calls them MB");
  EXPECT_EQ(d[0].limit, 70254592u);  // 67 MiB, not 67 000 000
  EXPECT_TRUE(d[0].limit_from_device);
  ExpectSeen(d[0], "chunks seen", "8 chunk lines: 8 in use (3072 bytes), 0 free (0 bytes)", 0);
  ExpectSeen(d[0], "largest in-use chunk seen", "1280 (1.2KiB)", 18);
  EXPECT_EQ(Find(d[0], "largest free chunk seen"), nullptr);
  ExpectSeen(d[0], "bin 256B", "64 chunks, 64 in use; 16.0KiB allocated, 16.0KiB in use, 14.0KiB requested",
             14);
  ExpectSeen(d[0], "bin 512B", "84 chunks, 84 in use; 42.0KiB allocated", 15);
}

TEST(SeenFiguresTest, Dump04LargestFreeChunkOfAChunkRun) {
  const std::vector<Diagnosis> d = DiagnoseShared("04.txt");
  ASSERT_EQ(d.size(), 1u);
  ExpectSeen(d[0], "chunks seen", "11 chunk lines: 8 in use (156188672 bytes), 3 free (1875968 bytes)", 0);
  ExpectSeen(d[0], "largest free chunk seen", "917504 (896.0KiB)", 5);
  ExpectSeen(d[0], "largest in-use chunk seen", "67108864 (64.00MiB)", 10);
  EXPECT_EQ(d[0].request_source, "");  // nothing shows the request
}

TEST(SeenFiguresTest, Dump05RequestFromBinFor) {
  const std::vector<Diagnosis> d = DiagnoseShared("05.txt");
  ASSERT_EQ(d.size(), 1u);
  ExpectSeen(d[0], "request (Bin for)", "Bin for 8.49GiB was 256.00MiB", 6);
  ExpectDerived(d[0], "rounded request",
                "about 9116068096 bytes: 8.49GiB as TF prints it (3 significant digits)");
  EXPECT_EQ(d[0].request_source, "Bin for");
  EXPECT_EQ(d[0].request_text, "8.49GiB");
  EXPECT_EQ(d[0].rounded, 9116068096u);
  ExpectSeen(d[0], "free chunk in bin 256.00MiB", "Size: 6.09GiB | Requested Size: 781.2KiB", 7);
  ExpectSeen(d[0], "bin 256.00MiB",
             "2 chunks, 1 in use; 14.59GiB allocated, 8.49GiB in use, 8.49GiB requested", 5);
  ExpectSeen(d[0], "chunks seen", "5 chunk lines: 5 in use (9320183808 bytes), 0 free (0 bytes)", 0);
  ExpectSeen(d[0], "largest in-use chunk seen", "9120000000 (8.49GiB)", 9);
}

TEST(SeenFiguresTest, Dump15HostAllocatorBinFor) {
  const std::vector<Diagnosis> d = DiagnoseShared("15.txt");
  ASSERT_EQ(d.size(), 1u);
  ExpectSeen(d[0], "request (Bin for)", "Bin for 3.72GiB was 256.00MiB", 15);
  EXPECT_EQ(d[0].rounded, 3994319616u);
  ExpectSeen(d[0], "chunks seen", "9 chunk lines: 9 in use (38359738368 bytes), 0 free (0 bytes)", 0);
  ExpectSeen(d[0], "largest in-use chunk seen", "5179869184 (4.82GiB)", 23);
  EXPECT_EQ(Find(d[0], "device"), nullptr);  // a host allocator: no device line
}

TEST(SeenFiguresTest, Dump20CompleteDumpStillListsTheDeviceLimit) {
  const std::vector<Diagnosis> d = DiagnoseShared("20.txt");
  ASSERT_EQ(d.size(), 1u);
  ExpectSeen(d[0], "device", "GPU:0 with 3340 MB memory", 13);
  ExpectDerived(d[0], "memory limit",
                "at least 3502243840 (3.26GiB): TF prints the limit in MiB, rounded down, and calls them MB");
  // The pool line's exact memory_limit_ (3340.69 MiB) wins over the device line's whole MiB.
  EXPECT_EQ(d[0].limit, 3502964736u);
  EXPECT_FALSE(d[0].limit_from_device);
}

TEST(SeenFiguresTest, Dump21TensorShapeGivesTheRequest) {
  const std::vector<Diagnosis> d = DiagnoseShared("21.txt");
  ASSERT_EQ(d.size(), 1u);
  ExpectSeen(d[0], "request", "112.5KiB (rounded to 115200)", 10);
  ExpectSeen(d[0], "tensor", "shape[32,30,30,1] float by allocator GPU_0_bfc", 69);
  ExpectDerived(d[0], "tensor bytes",
                "115200 (112.5KiB): the dimensions of [32,30,30,1] times 4 bytes per float");
  ExpectSeen(d[0], "pool", "568350976 (542.02MiB)", 60);
  ExpectSeen(d[0], "unallocated", "153 (153B)", 60);
}

}  // namespace
}  // namespace hbmsim::bfc_dump
