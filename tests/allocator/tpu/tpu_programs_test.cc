// Program reservations: placement at the bottom, reloads, program-on-program
// eviction and the E0101 failure.
#include "allocator/tpu/tpu_allocator.h"
#include "allocator/tpu/tpu_messages.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tpu_test_util.h"

namespace hbmsim::testing {
namespace {

TEST(TpuProgramsTest, ProgramsFillFromTheBottomAndSetReservable) {
  TpuAllocator a(Options(10 * kMiB));
  EXPECT_EQ(Alloc(a, 1, kMiB).offset.value(), 9 * kMiB);
  const ProgramResult p1 = a.LoadProgram(ProgramId(1), Bytes(kMiB + 1), EventIndex(1));
  ASSERT_TRUE(p1.ok);
  EXPECT_EQ(p1.offset.value(), 0u);
  EXPECT_EQ(p1.size.value(), kMiB + 512);  // rounded to the granule
  const ProgramResult p2 = a.LoadProgram(ProgramId(2), Bytes(kMiB), EventIndex(2));
  EXPECT_EQ(p2.offset.value(), kMiB + 512);
  const AllocatorStats s = a.GetStats();
  EXPECT_EQ(s.bytes_reserved, int64_t{2 * kMiB + 512});
  EXPECT_EQ(s.peak_bytes_reserved, int64_t{2 * kMiB + 512});
  // Reserved plus the free block [2M+512, 9M) right above the top program.
  EXPECT_EQ(s.bytes_reservable_limit, int64_t{9 * kMiB});
  a.UnloadProgram(ProgramId(1));
  // The hole at the bottom is taken first by the next program.
  EXPECT_EQ(a.LoadProgram(ProgramId(3), Bytes(512 * kKiB), EventIndex(3)).offset.value(), 0u);
  EXPECT_EQ(a.GetStats().bytes_reserved, int64_t{kMiB + 512 * kKiB});
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(TpuProgramsTest, ReservableIsZeroPlusTheBottomBlockWithoutPrograms) {
  TpuAllocator a(Options(10 * kMiB));
  ASSERT_TRUE(Alloc(a, 1, 3 * kMiB).ok());
  EXPECT_EQ(a.GetStats().bytes_reservable_limit, int64_t{7 * kMiB});
  EXPECT_EQ(a.GetStats().bytes_reserved, 0);
}

TEST(TpuProgramsTest, ReloadOfAnEvictedProgramEvictsAnotherProgram) {
  TpuAllocator a(Options(8 * kMiB));
  ASSERT_TRUE(a.LoadProgram(ProgramId(1), Bytes(2 * kMiB), EventIndex(0)).ok);  // [0,2M)
  ASSERT_TRUE(a.LoadProgram(ProgramId(2), Bytes(2 * kMiB), EventIndex(1)).ok);  // [2M,4M)
  ASSERT_TRUE(a.RunProgram(ProgramId(1), EventIndex(2)).ok);
  ASSERT_TRUE(a.RunProgram(ProgramId(2), EventIndex(3)).ok);
  ASSERT_EQ(Alloc(a, 10, 4 * kMiB).offset.value(), 4 * kMiB);
  ASSERT_EQ(Alloc(a, 11, 2 * kMiB).offset.value(), 0u);  // evicts p1
  const ProgramResult reload = a.RunProgram(ProgramId(1), EventIndex(6));
  ASSERT_TRUE(reload.ok);
  EXPECT_EQ(reload.offset.value(), 2 * kMiB);  // where p2 was: p2 is evicted for it
  EXPECT_EQ(a.counters().programs_reloaded, 1);
  EXPECT_EQ(a.counters().programs_evicted, 2);
  ASSERT_EQ(a.ResidentPrograms().size(), 1u);
  EXPECT_EQ(a.ResidentPrograms()[0].id.value(), 1u);
  // Buffers were never touched.
  EXPECT_EQ(AddressesById(a), (std::map<uint64_t, uint64_t>{{10, 4 * kMiB}, {11, 0}}));
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(TpuProgramsTest, RunOfAResidentProgramIsFree) {
  TpuAllocator a(Options(8 * kMiB));
  ASSERT_TRUE(a.LoadProgram(ProgramId(5), Bytes(kMiB), EventIndex(0)).ok);
  const ProgramResult r = a.RunProgram(ProgramId(5), EventIndex(1));
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.offset.value(), 0u);
  EXPECT_EQ(r.size.value(), kMiB);
  EXPECT_EQ(a.counters().programs_reloaded, 0);
}

TEST(TpuProgramsTest, ProgramLoadFailureReportsE0101Numbers) {
  TpuAllocator a(Options(4 * kMiB));
  ASSERT_TRUE(a.LoadProgram(ProgramId(1), Bytes(512 * kKiB), EventIndex(0)).ok);  // [0,512K)
  ASSERT_TRUE(a.RunProgram(ProgramId(1), EventIndex(1)).ok);                      // protected
  ASSERT_EQ(Alloc(a, 1, 3 * kMiB).offset.value(), kMiB);                          // [1M,4M)
  const ProgramResult r = a.LoadProgram(ProgramId(2), Bytes(kMiB), EventIndex(3));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.size.value(), kMiB);
  EXPECT_EQ(r.free_bytes.value(), 512 * kKiB);
  EXPECT_EQ(r.reserved_bytes.value(), 512 * kKiB);
  EXPECT_EQ(r.reservable_bytes.value(), kMiB);
  EXPECT_EQ(a.counters().program_load_failures, 1);
  EXPECT_EQ(a.counters().programs_evicted, 0);  // buffers are never evicted, p1 ran last
  EXPECT_EQ(FormatProgramLoadError("2", r.size, r.free_bytes, r.reserved_bytes, r.reservable_bytes),
            "RESOURCE_EXHAUSTED: Error loading program '2': Attempting to reserve 1.00M at the bottom of "
            "memory. That was not possible. There are 512.00K free, 512.00K reserved, and 1.00M reservable.");
  // The failed program stays known: running it retries the load, and now p2
  // is the program of the most recent run, so p1 may be evicted for it.
  const ProgramResult retry = a.RunProgram(ProgramId(2), EventIndex(4));
  EXPECT_TRUE(retry.ok);
  EXPECT_EQ(retry.offset.value(), 0u);
  EXPECT_EQ(a.counters().programs_evicted, 1);
  EXPECT_EQ(a.counters().programs_reloaded, 1);
  EXPECT_EQ(a.counters().program_load_failures, 1);
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(TpuProgramsTest, ProgramLoadEvictsOlderProgramsButNeverBuffers) {
  TpuAllocator a(Options(4 * kMiB));
  ASSERT_TRUE(a.LoadProgram(ProgramId(1), Bytes(512 * kKiB), EventIndex(0)).ok);
  ASSERT_EQ(Alloc(a, 1, 3 * kMiB).offset.value(), kMiB);
  const ProgramResult r = a.LoadProgram(ProgramId(2), Bytes(kMiB), EventIndex(2));
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.offset.value(), 0u);
  EXPECT_EQ(a.counters().programs_evicted, 1);
  EXPECT_EQ(a.counters().programs_reloaded, 0);
  EXPECT_EQ(AddressesById(a), (std::map<uint64_t, uint64_t>{{1, kMiB}}));
}

TEST(TpuProgramsTest, WithoutEvictionAProgramLoadFailsInsteadOfEvicting) {
  TpuOptions o = Options(4 * kMiB);
  o.evict_programs = false;
  TpuAllocator a(o);
  ASSERT_TRUE(a.LoadProgram(ProgramId(1), Bytes(512 * kKiB), EventIndex(0)).ok);
  ASSERT_TRUE(Alloc(a, 1, 3 * kMiB).ok());
  EXPECT_FALSE(a.LoadProgram(ProgramId(2), Bytes(kMiB), EventIndex(2)).ok);
  EXPECT_EQ(a.counters().programs_evicted, 0);
}

TEST(TpuProgramsTest, UnloadReleasesTheReservationAndForgetsTheProgram) {
  TpuAllocator a(Options(4 * kMiB));
  ASSERT_TRUE(a.LoadProgram(ProgramId(1), Bytes(kMiB), EventIndex(0)).ok);
  ASSERT_TRUE(a.RunProgram(ProgramId(1), EventIndex(1)).ok);
  a.UnloadProgram(ProgramId(1));
  EXPECT_EQ(a.GetStats().bytes_reserved, 0);
  EXPECT_EQ(a.GetStats().peak_bytes_reserved, int64_t{kMiB});
  EXPECT_TRUE(a.ResidentPrograms().empty());
  EXPECT_FALSE(a.RunProgram(ProgramId(1), EventIndex(3)).ok);  // unknown now
  EXPECT_TRUE(a.CheckInvariants().ok());
}

}  // namespace
}  // namespace hbmsim::testing
