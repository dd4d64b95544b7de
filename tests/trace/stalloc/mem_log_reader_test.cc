// STAlloc mem_log -> events, on a fixture written from the logger's output
// format (tests/data/stalloc) and on malformed lines.
#include "trace/stalloc/mem_log_reader.h"

#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/common/drain_events.h"
#include "trace/core/validator.h"

namespace hbmsim::trace::stalloc {
namespace {

const std::string kData = std::string(HBMSIM_SOURCE_DIR) + "/tests/data/stalloc/";

// Every event of `reader` as "kind id bytes sN dN addr|label"; the error, if any, last.
std::vector<std::string> Drain(MemLogReader& reader) {
  return hbmsim::testing::DrainEvents(reader, [](const Event& e) {
    std::string text = fmt::format("{} {} {} s{} d{}", EventKindName(e.kind), e.id, e.bytes.value(),
                                   e.stream.value(), e.device.value());
    if (e.addr) text += fmt::format(" {:#x}", *e.addr);
    if (!e.label.empty()) text += fmt::format(" {}", e.label);
    return text;
  });
}

std::vector<std::string> DrainText(std::string_view log, std::string name = "mem_log.txt") {
  auto reader = MemLogReader::FromString(log, std::move(name));
  return Drain(*reader);
}

TEST(MemLogReaderTest, EventsMarkersStreamsAndDeviceFromTheFileName) {
  auto reader = MemLogReader::Open(kData + "mem_log_dev1.txt");
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(Drain(**reader), (std::vector<std::string>{
                                 "alloc 1 1048576 s0 d1 0x7f3a00000000",
                                 "alloc 2 4096 s0 d1 0x7f3a00100000",
                                 "mark 0 0 s0 d1 iteration=0",
                                 "mark 0 0 s0 d1 micro_batch=F",
                                 "mark 0 0 s0 d1 layer=decoder.layers.0.mlp->MoELayer:F-start",
                                 "alloc 3 2097152 s1 d1 0x7f3a00200000",
                                 "mark 0 0 s0 d1 layer=decoder.layers.0.mlp->MoELayer:F-end",
                                 "mark 0 0 s0 d1 micro_batch=B",
                                 "free 3 0 s1 d1",
                                 "alloc 4 524288 s2 d1 0x7f3a00200000",
                                 "free 2 0 s0 d1",
                                 "mark 0 0 s0 d1 token_dispatcher_preprocess=F-end",
                                 "mark 0 0 s0 d1 iteration=end",
                                 "free 4 0 s2 d1",
                             }));
  EXPECT_EQ((*reader)->streams(),
            (std::vector<std::pair<uint64_t, uint64_t>>{{0x55d0c0a01230, 1}, {0x55d0c0a04560, 2}}));
  EXPECT_EQ((*reader)->null_pointer_lines(), 1u);
  EXPECT_EQ((*reader)->Location(), kData + "mem_log_dev1.txt:15");
  EXPECT_EQ(*(*reader)->metadata().Find("source"), "stalloc mem_log");
  EXPECT_EQ(*(*reader)->metadata().Find("device"), "1");
}

TEST(MemLogReaderTest, EventsPassTheTraceValidator) {
  auto reader = MemLogReader::Open(kData + "mem_log_dev1.txt");
  ASSERT_TRUE(reader.ok());
  TraceValidator validator;
  Event e;
  int events = 0;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->Next(e);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    EXPECT_TRUE(validator.Check(e).ok()) << (*reader)->Location();
    ++events;
  }
  EXPECT_EQ(events, 14);
  EXPECT_EQ(validator.buffers().size(), 1u);  // buffer 1 is never freed
}

TEST(MemLogReaderTest, DeviceOnlyFromTheLoggersFileName) {
  EXPECT_EQ(DeviceFromMemLogName("/run/trace/mem_log_dev12.txt"), 12u);
  EXPECT_EQ(DeviceFromMemLogName("mem_log_dev0.txt"), 0u);
  EXPECT_EQ(DeviceFromMemLogName("mem_log_dev.txt"), std::nullopt);
  EXPECT_EQ(DeviceFromMemLogName("mem_log_dev1.txt.bak"), std::nullopt);
  EXPECT_EQ(DeviceFromMemLogName("mem_log_devx.txt"), std::nullopt);
  EXPECT_EQ(DrainText("1 0x10 8 0\n", "copy.txt"), (std::vector<std::string>{"alloc 1 8 s0 d0 0x10"}));
}

TEST(MemLogReaderTest, BlankLinesCrLfAndPointerReuse) {
  EXPECT_EQ(
      DrainText("\r\n1 0x1000 64 0\r\n\n0 0x1000 64 0\r\n1\t0x1000  32 0\n"),
      (std::vector<std::string>{"alloc 1 64 s0 d0 0x1000", "free 1 0 s0 d0", "alloc 2 32 s0 d0 0x1000"}));
}

TEST(MemLogReaderTest, MalformedInputNamesFileAndLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"1 0x10 8\n",
       "mem_log.txt:1: expected an event 'status ptr size stream' (4 fields) or a marker 'name : value', "
       "found 3 fields"},
      {"2 0x10 8 0\n", "mem_log.txt:1: status must be 1 (alloc) or 0 (free), found '2'"},
      {"1 zz 8 0\n", "mem_log.txt:1: bad pointer 'zz'"},
      {"1 0x10 -8 0\n", "mem_log.txt:1: bad size: negative number '-8'"},
      {"1 0x10 99999999999999999999 0\n",
       "mem_log.txt:1: bad size: '99999999999999999999' does not fit in 64 bits"},
      {"1 0x10 8 s\n", "mem_log.txt:1: bad stream 's'"},
      {"0 0x10 8 0\n", "mem_log.txt:1: free of 0x10, which is not live"},
      {"1 0x10 8 0\n\n1 0x10 8 0\n",
       "mem_log.txt:3: alloc of 0x10, which is still live (buffer 1, allocated on line 1)"},
      {"1 0x10 8 0\n0 0x10 16 0\n",
       "mem_log.txt:2: free of 0x10 with size 16, but it was allocated with size 8 on line 1"},
      {"1 0 8 0\n", "mem_log.txt:1: alloc of 8 bytes with a null pointer"},
      {"Iteration Index : three\n", "mem_log.txt:1: iteration must be a number or 'end', found 'three'"},
      {"micro-batch : X\n", "mem_log.txt:1: micro-batch must be F, B or W, found 'X'"},
      {"a.mlp->MLP Layer : F-middle\n",
       "mem_log.txt:1: layer phase must be F, B or W then -start or -end, found 'F-middle'"},
      {"Iteration Index :\n",
       "mem_log.txt:1: marker 'Iteration Index :' needs a name and a value around ':'"},
      {"phase : a\x01"
       "b\n",
       "mem_log.txt:1: marker holds a control character"},
      {"phase : \xff\n", "mem_log.txt:1: marker is not valid UTF-8"},
      {"1 0x10 " + std::string(5000, '9') + " 0\n", "mem_log.txt:1: line longer than 4096 characters"},
  };
  for (const auto& [log, message] : cases) {
    EXPECT_EQ(DrainText(log).back(), "error: " + message) << log.substr(0, 80);
  }
}

TEST(MemLogReaderTest, RecognisesItsFirstLine) {
  EXPECT_TRUE(MemLogReader::LooksLikeMemLog("1 0x7f1e41329c00 512 0\n0 0x7f1e41329c00 512 0\n"));
  EXPECT_TRUE(MemLogReader::LooksLikeMemLog("\n1 0x7f1e41329c00 512 0x55d0c0a01230"));
  EXPECT_TRUE(MemLogReader::LooksLikeMemLog("Iteration Index : 0\n"));
  EXPECT_TRUE(MemLogReader::LooksLikeMemLog("micro-batch : F\n"));
  EXPECT_TRUE(MemLogReader::LooksLikeMemLog("decoder.layers.0.mlp->MoELayer Layer : F-start\n"));
  EXPECT_FALSE(MemLogReader::LooksLikeMemLog("alloc 1 512\n"));
  EXPECT_FALSE(MemLogReader::LooksLikeMemLog("# hbmsim-trace v1\n"));
  EXPECT_FALSE(MemLogReader::LooksLikeMemLog("20000\n3\n8\n1\n"));
  EXPECT_FALSE(MemLogReader::LooksLikeMemLog("1 0x10 8\n"));
  EXPECT_FALSE(MemLogReader::LooksLikeMemLog(""));
}

TEST(MemLogReaderTest, MissingFileIsNotFound) {
  auto missing = MemLogReader::Open("/nonexistent/mem_log_dev0.txt");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "/nonexistent/mem_log_dev0.txt: cannot read");
}

}  // namespace
}  // namespace hbmsim::trace::stalloc
