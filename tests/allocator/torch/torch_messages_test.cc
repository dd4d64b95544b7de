// format_size, the OutOfMemoryError text and the memory_summary() table.
#include "allocator/torch/torch_messages.h"

#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/allocator/torch/torch_test_util.h"

namespace hbmsim::allocator::torch {
namespace {

using testing::kMiB;
constexpr uint64_t kGiB = 1ull << 30;

TEST(FormatSize, InclusiveBoundariesAndTwoDecimals) {
  EXPECT_EQ(FormatSize(0), "0 bytes");
  EXPECT_EQ(FormatSize(1024), "1024 bytes");
  EXPECT_EQ(FormatSize(1025), "1.00 KiB");
  EXPECT_EQ(FormatSize(1048576), "1024.00 KiB");
  EXPECT_EQ(FormatSize(1048577), "1.00 MiB");
  EXPECT_EQ(FormatSize(5000000), "4.77 MiB");
  EXPECT_EQ(FormatSize(1073741824), "1024.00 MiB");
  EXPECT_EQ(FormatSize(1610612736), "1.50 GiB");
  EXPECT_EQ(FormatSize(85899345920), "80.00 GiB");
}

constexpr const char* kAdvice =
    "If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to "
    "avoid fragmentation.  See documentation for Memory Management  "
    "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";

TEST(OutOfMemoryMessage, PlainState) {
  OomNumbers n;
  n.alloc_size = Bytes(20 * kMiB);
  n.device = 0;
  n.total = Bytes(40 * kMiB);
  n.free = Bytes(10 * kMiB);
  n.allocated = Bytes(28 * kMiB + 1024);
  n.reserved = Bytes(30 * kMiB);
  EXPECT_EQ(FormatOutOfMemoryMessage(n),
            std::string(
                "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 40.00 MiB of "
                "which 10.00 MiB is free. Of the allocated memory 28.00 MiB is allocated by PyTorch, and "
                "2.00 MiB is reserved by PyTorch but unallocated. ") +
                kAdvice);
}

TEST(OutOfMemoryMessage, AllowedAndPrivatePools) {
  OomNumbers n;
  n.alloc_size = Bytes(546 * kMiB);
  n.device = 3;
  n.total = Bytes(80 * kGiB);
  n.free = Bytes(512);
  n.allowed = Bytes(40 * kGiB);
  n.allocated = Bytes(30 * kGiB);
  n.private_pools = Bytes(46 * kMiB);
  n.reserved = Bytes(31 * kGiB);
  EXPECT_EQ(
      FormatOutOfMemoryMessage(n),
      std::string(
          "CUDA out of memory. Tried to allocate 546.00 MiB. GPU 3 has a total capacity of 80.00 GiB of "
          "which 512 bytes is free. 40.00 GiB allowed; Of the allocated memory 30.04 GiB is allocated "
          "by PyTorch, with 46.00 MiB allocated in private pools (e.g., CUDA Graphs), and 978.00 MiB is "
          "reserved by PyTorch but unallocated. ") +
          kAdvice);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TorchStats SummaryStats() {
  TorchStats s;
  s.allocated_bytes.Increase(false, 5 * kGiB);
  s.allocated_bytes.Decrease(false, 2 * kGiB);
  s.allocated_bytes.Increase(true, 700 * 1024);
  s.allocation.Increase(false, 1234);
  s.reserved_bytes.Increase(false, 6 * kGiB);
  s.oversize_segments.Increase(800000);
  s.num_ooms = 1;
  s.num_alloc_retries = 3;
  return s;
}

TEST(MemorySummary, HeaderRowsAndUnits) {
  const std::vector<std::string> lines = Lines(FormatMemorySummary(SummaryStats(), 0));
  ASSERT_EQ(lines.size(), 47u);
  for (const std::string& l : lines) EXPECT_EQ(l.size(), 77u) << l;
  EXPECT_EQ(lines[0], "|" + std::string(75, '=') + "|");
  EXPECT_EQ(lines[1], "|                  PyTorch CUDA memory summary, device ID 0                 |");
  EXPECT_EQ(lines[3], "|            CUDA OOMs: 1            |        cudaMalloc retries: 3         |");
  EXPECT_EQ(lines[5], "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |");
  EXPECT_EQ(lines[7], "| Allocated memory      |   3072 MiB |   5120 MiB |   5120 MiB |   2048 MiB |");
  EXPECT_EQ(lines[8], "|       from large pool |   3072 MiB |   5120 MiB |   5120 MiB |   2048 MiB |");
  EXPECT_EQ(lines[9], "|       from small pool |      0 MiB |      0 MiB |      0 MiB |      0 MiB |");
  EXPECT_EQ(lines[19], "| GPU reserved memory   |   6144 MiB |   6144 MiB |   6144 MiB |      0 B   |");
  EXPECT_EQ(lines[27], "| Allocations           |    1234    |    1234    |    1234    |       0    |");
  EXPECT_EQ(lines[45], "| Oversize GPU segments |     800 K  |     800 K  |     800 K  |       0    |");
}

TEST(MemorySummary, AbbreviatedDropsPoolRowsAndSmallValuesStayInBytes) {
  TorchStats s;
  s.active_bytes.Increase(true, 700 * 1024);  // below 768 KiB: printed in bytes
  const std::vector<std::string> lines = Lines(FormatMemorySummary(s, 2, /*abbreviated=*/true));
  ASSERT_EQ(lines.size(), 29u);
  EXPECT_EQ(lines[1], "|                  PyTorch CUDA memory summary, device ID 2                 |");
  EXPECT_EQ(lines[9], "| Active memory         | 716800 B   | 716800 B   | 716800 B   |      0 B   |");
}

}  // namespace
}  // namespace hbmsim::allocator::torch
