// What `diagnose` tells about each real dump in shared/bfc_dumps even when the
// dump is partial: every figure the file shows, read off the file by hand
// (line numbers are the file's), each marked seen or derived.
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "test_util.h"
#include "trace/bfc_dump/render.h"

namespace hbmsim::trace::bfc_dump {
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

TEST(SeenFiguresTest, Dump03TwoLogsOneBinLineAndAChunkRun) {
  const std::vector<Diagnosis> d = DiagnoseShared("03.txt");
  ASSERT_EQ(d.size(), 2u);
  ExpectSeen(d[0], "bin 256B", "0 chunks, 0 in use; 0B allocated, 0B in use, 0B requested", 10);
  EXPECT_EQ(d[0].request_source, "");
  ExpectSeen(d[1], "chunks seen", "7 chunk lines: 7 in use (10459904 bytes), 0 free (0 bytes)", 0);
  ExpectSeen(d[1], "largest in-use chunk seen", "2620160 (2.50MiB)", 18);
  ExpectDerived(d[1], "in-use summary",
                "2 sizes, 22 chunks, 8192 (8.0KiB) in use: the sum of the \"Chunks of size\" lines seen");
}

TEST(SeenFiguresTest, Dump06BinsAndAPartialSummary) {
  const std::vector<Diagnosis> d = DiagnoseShared("06.txt");
  ASSERT_EQ(d.size(), 1u);
  ExpectSeen(d[0], "bin 8.00MiB",
             "2 chunks, 2 in use; 24.57MiB allocated, 24.57MiB in use, 24.57MiB requested", 7);
  ExpectDerived(
      d[0], "in-use summary",
      "10 sizes, 327 chunks, 2544128 (2.43MiB) in use: the sum of the \"Chunks of size\" lines seen");
}

TEST(SeenFiguresTest, Dump07SummaryOnly) {
  const std::vector<Diagnosis> d = DiagnoseShared("07.txt");
  ASSERT_EQ(d.size(), 1u);
  ExpectDerived(
      d[0], "in-use summary",
      "12 sizes, 9542 chunks, 29296128 (27.94MiB) in use: the sum of the \"Chunks of size\" lines seen");
  EXPECT_EQ(d[0].figures.size(), 1u);
}

TEST(SeenFiguresTest, Dump08OldestBinsWithAFreeChunk) {
  const std::vector<Diagnosis> d = DiagnoseShared("08.txt");
  ASSERT_EQ(d.size(), 1u);
  ExpectSeen(d[0], "bin 128.0KiB", "1 chunks, 0 in use; 130.0KiB allocated, 0B in use", 11);
  ExpectSeen(d[0], "bin 4.0KiB", "0 chunks, 0 in use; 0B allocated, 0B in use, 0B requested", 6);
}

TEST(SeenFiguresTest, Dump09Tf1HeaderWithoutRounding) {
  const std::vector<Diagnosis> d = DiagnoseShared("09.txt");
  ASSERT_EQ(d.size(), 1u);
  ExpectSeen(d[0], "request", "84.50MiB", 4);
  EXPECT_EQ(d[0].rounded, 88604672u);  // 84.5 MiB, a multiple of 256 already
  EXPECT_TRUE(d[0].rounded_is_estimate);
  ExpectSeen(d[0], "bin 512B", "19 chunks, 18 in use; 9.5KiB allocated, 9.0KiB in use, 9.0KiB requested", 6);
}

TEST(SeenFiguresTest, Dump11And12HeaderOnly) {
  const std::vector<Diagnosis> d11 = DiagnoseShared("11.txt");
  ASSERT_EQ(d11.size(), 1u);
  ExpectSeen(d11[0], "request", "560.44MiB (rounded to 587661312), requested by op _EagerConst", 9);
  EXPECT_EQ(d11[0].figures.size(), 1u);
  const std::vector<Diagnosis> d12 = DiagnoseShared("12.txt");
  ASSERT_EQ(d12.size(), 1u);
  EXPECT_EQ(d12[0].rounded, 35758080u);
  EXPECT_EQ(d12[0].figures.front().line, 6);
}

TEST(SeenFiguresTest, Dump13Bins) {
  const std::vector<Diagnosis> d = DiagnoseShared("13.txt");
  ASSERT_EQ(d.size(), 1u);
  ExpectSeen(d[0], "bin 2.0KiB", "2 chunks, 2 in use; 7.0KiB allocated, 7.0KiB in use, 6.8KiB requested", 4);
  EXPECT_EQ(d[0].figures.size(), 6u);  // six bin lines, nothing else
}

// Only known what-ifs are printed: a partial dump with a request but no totals has none.
TEST(SeenFiguresTest, UnknownWhatIfsAreLeftOut) {
  const BfcLog log = LoadSharedDump("11.txt");
  const std::string text = RenderDiagnoseText(log, DiagnoseAll(log));
  EXPECT_EQ(text.find("what if"), std::string::npos) << text;
  EXPECT_EQ(text.find("unknown\n    paged"), std::string::npos);
}

}  // namespace
}  // namespace hbmsim::trace::bfc_dump
