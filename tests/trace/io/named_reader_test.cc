// io::NamedReader (issue 45): a reader over a piped input answers every
// question EventReader asks as the reader it wraps, except that the input's
// name replaces the scratch file's in messages, locations and metadata. A
// question a wrapper forgot used to come back empty through a pipe
// (current_figures: a profile's --check-recorded compared nothing).
#include "trace/io/named_reader.h"

#include <sys/stat.h>

#include <memory>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "tests/trace/io/io_test_util.h"
#include "trace/io/input_file.h"

namespace hbmsim::trace::io {
namespace {

// Answers every question with something no default gives, naming `path`.
class EveryAnswerReader final : public EventReader {
 public:
  explicit EveryAnswerReader(std::string path) : path_(std::move(path)) {
    metadata_.entries.emplace_back("source", path_);
  }
  absl::StatusOr<bool> Next(Event& e) override {
    if (++reads_ > 1) return absl::InvalidArgumentError(path_ + ":2: free of id 7 that is not live");
    e.kind = EventKind::kAlloc;
    e.id = 7;
    return true;
  }
  const TraceMetadata& metadata() const override { return metadata_; }
  std::string Location() const override { return path_ + ":1"; }
  std::optional<SideEntry> current_side() const override { return SideEntry{SideAction::kOom, 64, 128, 256}; }
  std::optional<size_t> current_entry_index() const override { return 421; }
  std::optional<RecordedFigures> current_figures() const override {
    RecordedFigures f;
    f.bytes_in_use = 4096;
    f.where = "record 3";
    return f;
  }
  const ContextTable* context_table() const override { return &table_; }
  EventContext context() const override {
    EventContext c;
    c.frames = 5;
    return c;
  }

 private:
  std::string path_;
  TraceMetadata metadata_;
  ContextTable table_;
  int reads_ = 0;
};

TEST(NamedReader, ForwardsEveryAnswerAndNamesTheInputAsGiven) {
  const std::string dir = testing::ScratchDir();
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A FIFO is spooled: readers open /proc/self/fd/N, messages say `fifo`'s path.
  std::thread writer([&] { testing::Spit(fifo, "bytes"); });
  absl::StatusOr<InputFile> input = OpenInputFile(fifo);
  writer.join();
  ASSERT_TRUE(input.ok()) << input.status();
  ASSERT_TRUE(input->spooled());
  auto shared = std::make_shared<const InputFile>(*std::move(input));
  const EveryAnswerReader* inner = nullptr;
  NamedReader named(shared, [&] {
    auto r = std::make_unique<EveryAnswerReader>(shared->path());
    inner = r.get();
    return r;
  }());

  Event e;
  ASSERT_TRUE(named.Next(e).ok());
  EXPECT_EQ(e.id, 7u);
  EXPECT_EQ(named.Location(), fifo + ":1");
  EXPECT_EQ(*named.metadata().Find("source"), fifo);
  EXPECT_EQ(named.current_side()->device_free, 256u);
  EXPECT_EQ(named.current_entry_index(), std::optional<size_t>(421));
  ASSERT_TRUE(named.current_figures().has_value());
  EXPECT_EQ(named.current_figures()->bytes_in_use, std::optional<int64_t>(4096));
  EXPECT_EQ(named.current_figures()->where, "record 3");
  EXPECT_EQ(named.context_table(), inner->context_table());
  EXPECT_EQ(named.context().frames, 5u);
  const absl::StatusOr<bool> second = named.Next(e);
  EXPECT_EQ(second.status().message(), fifo + ":2: free of id 7 that is not live");
}

}  // namespace
}  // namespace hbmsim::trace::io
