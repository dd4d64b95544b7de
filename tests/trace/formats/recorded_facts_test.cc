// RecordedFacts (trace/formats/recorded_facts.h): a fact that costs a walk is
// made once, on first use, and shared by copies; a recording opened through
// a FIFO (a NamedRecording) has every fact the same file has by path: the
// defect of issue 45 was a wrapper that forwarded some of them.
#include "trace/formats/recorded_facts.h"

#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/common/shared_data.h"
#include "trace/formats/format_table.h"

namespace hbmsim {
namespace {

TEST(Lazy, MadeOnceOnFirstUseAndSharedByCopies) {
  int made = 0;
  const Lazy<int> lazy = Lazy<int>::Of([&made] { return ++made * 10; });
  EXPECT_EQ(made, 0);
  const Lazy<int> copy = lazy;
  EXPECT_EQ(copy.get(), 10);
  EXPECT_EQ(lazy.get(), 10);
  EXPECT_EQ(made, 1);
  const Lazy<int> doubled = lazy.Then([](const int& v) { return v * 2; });
  EXPECT_EQ(doubled.get(), 20);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(Lazy<int>(7).get(), 7);
}

TEST(Lazy, ManyThreadsAskingMakeItOnce) {
  std::atomic<int> made{0};
  const Lazy<int> lazy = Lazy<int>::Of([&made] { return ++made; });
  std::vector<std::thread> threads;
  std::atomic<int> sum{0};
  for (int i = 0; i < 8; ++i) threads.emplace_back([&] { sum += lazy.get(); });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(made.load(), 1);
  EXPECT_EQ(sum.load(), 8);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `file` opened by path, and again through a FIFO fed with its bytes.
struct BothWays {
  std::unique_ptr<Recording> by_path;
  std::unique_ptr<Recording> through_fifo;
  std::string fifo;
};

BothWays OpenBothWays(const std::string& file) {
  BothWays out;
  if (!std::filesystem::is_regular_file(file)) {
    ADD_FAILURE() << file << " is missing: the shared recordings are expected beside the repository";
    return out;
  }
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  out.fifo = ::testing::TempDir() + "/hbmsim_facts_" + test->name() + ".fifo";
  std::filesystem::remove(out.fifo);
  EXPECT_EQ(::mkfifo(out.fifo.c_str(), 0600), 0);
  const std::string bytes = Slurp(file);
  std::thread writer([&] { std::ofstream(out.fifo, std::ios::binary) << bytes; });
  absl::StatusOr<std::unique_ptr<Recording>> piped = OpenRecording(out.fifo);
  writer.join();
  absl::StatusOr<std::unique_ptr<Recording>> direct = OpenRecording(file);
  EXPECT_TRUE(piped.ok()) << piped.status();
  EXPECT_TRUE(direct.ok()) << direct.status();
  if (piped.ok()) out.through_fifo = *std::move(piped);
  if (direct.ok()) out.by_path = *std::move(direct);
  return out;
}

TEST(NamedRecordingFacts, AStateOnlySnapshotKeepsItsStateThroughAFifo) {
  const BothWays r = OpenBothWays(kSharedTorchSnapshots + "docubox_state_only.pickle");
  ASSERT_TRUE(r.by_path && r.through_fifo);
  const RecordedFacts& path = r.by_path->facts();
  const RecordedFacts& fifo = r.through_fifo->facts();
  EXPECT_TRUE(path.state_only);
  EXPECT_TRUE(fifo.state_only);
  EXPECT_EQ(fifo.description, path.description);
  EXPECT_NE(path.context_table, nullptr);
  EXPECT_NE(fifo.context_table, nullptr);
  ASSERT_TRUE(path.FinalState(std::nullopt).has_value());
  ASSERT_TRUE(fifo.FinalState(std::nullopt).has_value());
  const RecordedState a = *path.FinalState(std::nullopt), b = *fifo.FinalState(std::nullopt);
  EXPECT_EQ(b.device, a.device);
  EXPECT_EQ(b.segments.size(), a.segments.size());
  EXPECT_EQ(b.devices_with_segments, a.devices_with_segments);
  EXPECT_EQ(r.through_fifo->path(), r.fifo);
}

TEST(NamedRecordingFacts, AProfileKeepsEachAllocatorsLimitSettingsAndFiguresThroughAFifo) {
  const BothWays r = OpenBothWays(std::string(HBMSIM_SHARED_DIR) + "/profiler/tf_t4_keras_fit.xplane.pb");
  ASSERT_TRUE(r.by_path && r.through_fifo);
  const RecordedFacts& path = r.by_path->facts();
  const RecordedFacts& fifo = r.through_fifo->facts();
  EXPECT_TRUE(fifo.records_figures);
  ASSERT_TRUE(path.devices && fifo.devices);
  ASSERT_FALSE(path.devices->empty());
  ASSERT_EQ(fifo.devices->size(), path.devices->size());
  for (const DeviceEvents& d : *path.devices) {
    SCOPED_TRACE(d.name);
    const DeviceFacts& p = path.device(d.device);
    const DeviceFacts& f = fifo.device(d.device);
    ASSERT_EQ(f.limit.has_value(), p.limit.has_value());
    if (p.limit) {
      EXPECT_EQ(f.limit->limit, p.limit->limit);  // braces: EXPECT_EQ hides an if/else
    }
    ASSERT_TRUE(f.settings.has_value());
    EXPECT_EQ(f.settings->framework, p.settings->framework);
    EXPECT_EQ(f.settings->pool_grown, p.settings->pool_grown);
    ASSERT_EQ(f.start_summary.has_value(), p.start_summary.has_value());
  }
  // GPU_0_bfc's limit as the profile states it: the fact a pipe used to drop.
  EXPECT_EQ(fifo.device(DeviceId(0)).limit->limit, Bytes(14648653952));
}

}  // namespace
}  // namespace hbmsim
