// Exact-value tests of the bugs the fuzz targets found (docs/fuzzing.md,
// "Findings"). The inputs that found them stay in the corpora as
// regress-*; these tests pin the behaviour the fixes chose.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "trace/bfc_dump/parser.h"
#include "trace/bfc_dump/render.h"
#include "trace/torch/snapshot.h"
#include "trace/torch/snapshot_events.h"

namespace hbmsim {
namespace {

TraceEntry AllocAt(uint64_t addr, uint64_t bytes, uint64_t time_us) {
  TraceEntry t;
  t.action = TraceAction::kAlloc;
  t.addr = Offset(addr);
  t.size = Bytes(bytes);
  t.time = time_us;
  t.has_time = true;
  return t;
}

// Found by fuzz_torch_snapshot on a trimmed h100x4 snapshot: devices are read
// one after another, so device 1's first stamp was earlier than device 0's
// last, and `hbmsim convert` wrote a trace that `hbmsim replay` refused.
TEST(FuzzRegressions, SnapshotEventsNeverGoBackInTime) {
  auto snap = std::make_shared<Snapshot>();
  snap->file_name = "two.pickle";
  snap->generation = 3;
  snap->device_traces = {DeviceTrace{DeviceId(0), {AllocAt(0x1000, 512, 2000), AllocAt(0x2000, 512, 2500)}},
                         DeviceTrace{DeviceId(1), {AllocAt(0x1000, 256, 1000), AllocAt(0x3000, 256, 3000)}}};
  SnapshotEventReader reader(snap, {DeviceId(0), DeviceId(1)});
  std::vector<std::pair<uint64_t, uint64_t>> device_and_time;
  Event e;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(e);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    ASSERT_TRUE(e.time_us.has_value());
    device_and_time.emplace_back(e.device.value(), *e.time_us);
  }
  const std::vector<std::pair<uint64_t, uint64_t>> expected = {{0, 2000}, {0, 2500}, {1, 2500}, {1, 3000}};
  EXPECT_EQ(device_and_time, expected);
}

// Found by fuzz_bfc_dump: a byte that is not UTF-8 in the allocator's name
// made nlohmann::json throw from RenderDiagnoseJson (`hbmsim diagnose --json`
// exited 3, "internal error"). It is now written as U+FFFD.
TEST(FuzzRegressions, DiagnoseJsonReplacesInvalidUtf8) {
  absl::StatusOr<bfc_dump::BfcLog> log = bfc_dump::ParseBfcLog(
      "Allocator (GPU_0_bfc\xa6) ran out of memory trying to allocate 1.00GiB (rounded to 1073741824) from the "
      "lower end requested by op dot\n",
      "bad.log");
  ASSERT_TRUE(log.ok()) << log.status();
  const std::string json = bfc_dump::RenderDiagnoseJson(*log, bfc_dump::DiagnoseAll(*log));
  EXPECT_NE(json.find("\"allocator\": \"GPU_0_bfc\xef\xbf\xbd\""), std::string::npos) << json;
}

}  // namespace
}  // namespace hbmsim
