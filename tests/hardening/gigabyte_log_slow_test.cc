// `hbmsim diagnose` on a log whose only line is 1 GB with no newline: the line
// is skipped unread (bounded memory), then the log holds no dump: exit 2, one
// line. Label slow: skipping still reads the gigabyte (twice: the remat
// warning scan and the dump parser), seconds of kernel time on a busy machine.
#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/hardening/child_process.h"

namespace hbmsim::testing {
namespace {

TEST(GigabyteLogTest, DiagnoseSkipsAGigabyteLineInBoundedMemory) {
  const std::string path = SparseFile("line.log", "InUse at 7f0000000000 of size ", 1000000000);
  const BoundedRun r = RunBounded("diagnose " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "hbmsim diagnose: " + path + ": no BFC allocator dump found (1 lines, 1 not part of a dump)\n");
  EXPECT_EQ(r.out, "");
  EXPECT_LT(r.peak_rss_bytes, uint64_t{256} << 20);
}

}  // namespace
}  // namespace hbmsim::testing
