#include "allocator/tpu/tpu_messages.h"

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tpu_test_util.h"

namespace hbmsim::testing {
namespace {

TEST(TpuMessagesTest, SizesUseTwoDecimalsAndBinaryUnits) {
  EXPECT_EQ(FormatTpuSize(Bytes(0)), "0B");
  EXPECT_EQ(FormatTpuSize(Bytes(1023)), "1023B");
  EXPECT_EQ(FormatTpuSize(Bytes(1024)), "1.00K");
  EXPECT_EQ(FormatTpuSize(Bytes(1536)), "1.50K");
  EXPECT_EQ(FormatTpuSize(Bytes::MiB(8)), "8.00M");
  EXPECT_EQ(FormatTpuSize(Bytes(6737408)), "6.43M");
  EXPECT_EQ(FormatTpuSize(Bytes::GiB(3) - Bytes::GiB(1) + Bytes(536870912)), "2.50G");
  EXPECT_EQ(FormatTpuSize(Bytes::GiB(2048)), "2.00T");
  EXPECT_EQ(FormatTpuSize(Bytes::GiB(2048 * 1024)), "2048.00T");
}

TEST(TpuMessagesTest, BufferAllocationErrorIsGooglesE0100Text) {
  EXPECT_EQ(FormatBufferAllocationError(Bytes::MiB(8), Bytes(6737408)),
            "RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 8.00M. That was not "
            "possible. There are 6.43M free.; (0x0x1_HBM0)");
}

TEST(TpuMessagesTest, ProgramLoadErrorIsGooglesE0101Text) {
  EXPECT_EQ(FormatProgramLoadError("jit_step", Bytes::MiB(2), Bytes(512 * kKiB), Bytes(0), Bytes::MiB(1)),
            "RESOURCE_EXHAUSTED: Error loading program 'jit_step': Attempting to reserve 2.00M at the bottom "
            "of memory. That was not possible. There are 512.00K free, 0B reserved, and 1.00M reservable.");
}

TEST(TpuMessagesTest, AllocationDumpListsBuffersLargestFirstThenPrograms) {
  TpuOptions o = Options(4 * kMiB);
  o.log_allocations_on_oom = true;
  TpuAllocator a(o);
  ASSERT_TRUE(a.LoadProgram(ProgramId(7), Bytes(kMiB), EventIndex(0)).ok);
  ASSERT_TRUE(a.RunProgram(ProgramId(7), EventIndex(1)).ok);
  const TensorShape shape = *ParseShape("bf16[5,100]");
  ASSERT_TRUE(Alloc(a, 1, 1000, &shape).ok());
  ASSERT_TRUE(Alloc(a, 2, 2 * kMiB).ok());
  const AllocResult failed = Alloc(a, 3, 2 * kMiB);
  ASSERT_EQ(failed.status, AllocStatus::kOom);
  const std::vector<TpuOomSnapshot> snapshots = a.TakeOomSnapshots();
  ASSERT_EQ(snapshots.size(), 1u);
  EXPECT_TRUE(a.oom_snapshots().empty());
  EXPECT_EQ(FormatAllocationDump(snapshots[0]),
            "tpu_log_allocations_on_oom: event 3: buffer 3 needs 2.00M (2097152 B); 1020.00K free, largest "
            "request that fits 1020.00K\n"
            "live buffers: 2 holding 2.00M (2.00M requested, 3.02K padding)\n"
            "  buffer 2 shape=- padded=2.00M (2097152 B) requested=2097152 B address=0x1ff000\n"
            "  buffer 1 shape=bf16[5,100] padded=4.00K (4096 B) requested=1000 B address=0x3ff000\n"
            "resident programs: 1 reserving 1.00M\n"
            "  program 7 size=1.00M (1048576 B) address=0x0 running\n");
}

}  // namespace
}  // namespace hbmsim::testing
