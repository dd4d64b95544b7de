// The format table (trace/formats/format_table.cc) keyed by TraceFormat: one
// row per format, each with its own name, and text as the format a file no
// other row recognises is read as, wherever its row stands.
#include "trace/formats/format_table.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "sim/all_layers.h"

namespace hbmsim {
namespace {

TEST(FormatTableTest, EveryFormatHasOneRowAndItsOwnName) {
  EXPECT_EQ(TraceFormats().size(), kTraceFormatCount);
  std::set<std::string> names;
  for (size_t i = 0; i < kTraceFormatCount; ++i) {
    const auto format = static_cast<TraceFormat>(i);
    EXPECT_EQ(TraceFormatRowOf(format).format, format);
    names.emplace(TraceFormatName(format));
  }
  EXPECT_EQ(names.size(), kTraceFormatCount);
  EXPECT_EQ(TraceFormatName(TraceFormat::kTorchSnapshot), "torch-snapshot");
  EXPECT_EQ(TraceFormatName(TraceFormat::kJaxDeviceProfile), "jax-device-profile");
  EXPECT_EQ(TraceFormatName(TraceFormat::kText), "text");
}

std::string Write(const std::string& name, const std::string& bytes) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(FormatTableTest, AFileNoRowRecognisesIsTextAndSaysSoAsARecording) {
  const std::string path = Write("format_table_test_plain.trace", "# hbmsim-trace v1\nalloc 1 64\nfree 1\n");
  absl::StatusOr<const TraceFormatRow*> row = DetectTraceFormat(path);
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ((*row)->format, TraceFormat::kText);
  absl::StatusOr<std::unique_ptr<Recording>> r = OpenRecording(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->format(), TraceFormat::kText);
  EXPECT_EQ((*r)->facts().description, "text");  // a format that says nothing more is described by its name
  std::remove(path.c_str());
}

TEST(FormatTableTest, ARecognisedHeadOpensAsItsFormat) {
  const std::string path = Write("format_table_test.rmm.csv", "Thread,Time,Action,Pointer,Size,Stream\n");
  absl::StatusOr<const TraceFormatRow*> row = DetectTraceFormat(path);
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ((*row)->format, TraceFormat::kRmmLog);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace hbmsim
