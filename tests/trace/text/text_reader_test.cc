#include "trace/text/text_reader.h"

#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/trace/text/trace_test_util.h"

namespace hbmsim {
namespace {

using testing::FirstErrorOfText;
using testing::ReadAll;

std::vector<OwnedEvent> EventsOf(std::string text) {
  absl::StatusOr<std::unique_ptr<TextTraceReader>> reader = TextTraceReader::FromString(std::move(text));
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return {};
  absl::StatusOr<std::vector<OwnedEvent>> events = ReadAll(**reader);
  EXPECT_TRUE(events.ok()) << events.status();
  return events.ok() ? *std::move(events) : std::vector<OwnedEvent>{};
}

TEST(TextReaderTest, SpecExample) {
  std::vector<OwnedEvent> ev = EventsOf(
      "# hbmsim-trace v1\n# source: hand-written example\nalloc 1 1000 tag=weights\n"
      "alloc 2 4096 stream=0 shape=f32[32,32]\nmark step=0\nfree 1\nfree_requested 2\nfree_completed 2\n");
  ASSERT_EQ(ev.size(), 6u);
  EXPECT_EQ(ev[0].event.kind, EventKind::kAlloc);
  EXPECT_EQ(ev[0].event.id, 1u);
  EXPECT_EQ(ev[0].event.bytes, Bytes(1000));
  EXPECT_EQ(ev[0].tag, "weights");
  EXPECT_EQ(ev[1].event.shape, (TensorShape{DType::kF32, {32, 32}}));
  EXPECT_EQ(ev[2].event.kind, EventKind::kMark);
  EXPECT_EQ(ev[2].label, "step=0");  // a label may hold '='
  EXPECT_EQ(ev[3].event.kind, EventKind::kFree);
  EXPECT_EQ(ev[4].event.kind, EventKind::kFreeRequested);
  EXPECT_EQ(ev[5].event.kind, EventKind::kFreeCompleted);
  EXPECT_EQ(ev[5].event.id, 2u);
}

TEST(TextReaderTest, AliasesAndUnits) {
  std::vector<OwnedEvent> ev = EventsOf("a 1 2MiB\na 2 3KiB\na 3 1GiB\na 4 1TiB\nf 1\nf 2\n");
  ASSERT_EQ(ev.size(), 6u);
  EXPECT_EQ(ev[0].event.bytes, Bytes(2097152));
  EXPECT_EQ(ev[1].event.bytes, Bytes(3072));
  EXPECT_EQ(ev[2].event.bytes, Bytes(1073741824));
  EXPECT_EQ(ev[3].event.bytes, Bytes(1099511627776));
  EXPECT_EQ(ev[4].event.kind, EventKind::kFree);
  EXPECT_EQ(ev[5].event.id, 2u);
}

TEST(TextReaderTest, AllAttributes) {
  std::vector<OwnedEvent> ev = EventsOf(
      "alloc 9 64\tt=5  stream=2 tag=op:matmul shape=bf16[4096,1024] addr=0x7F00 device=3\n"
      "alloc 10 64 addr=4096\n"
      "program_load 1 4096 t=6 tag=exe device=1\n"
      "program_run 1 t=7 device=1\n"
      "free 9 device=3 stream=2 t=8\n"
      "mark end t=9 device=3\n");
  ASSERT_EQ(ev.size(), 6u);
  const Event& a = ev[0].event;
  EXPECT_EQ(a.time_us, 5u);
  EXPECT_EQ(a.stream, StreamId(2));
  EXPECT_EQ(ev[0].tag, "op:matmul");
  EXPECT_EQ(a.shape, (TensorShape{DType::kBF16, {4096, 1024}}));
  EXPECT_EQ(a.addr, 0x7f00u);
  EXPECT_EQ(a.device, DeviceId(3));
  EXPECT_EQ(ev[1].event.addr, 4096u);
  EXPECT_EQ(ev[1].event.time_us, std::nullopt);
  EXPECT_EQ(ev[1].event.device, DeviceId(0));
  EXPECT_EQ(ev[2].event.bytes, Bytes(4096));
  EXPECT_EQ(ev[2].tag, "exe");
  EXPECT_EQ(ev[3].event.kind, EventKind::kProgramRun);
  EXPECT_EQ(ev[3].event.device, DeviceId(1));
  EXPECT_EQ(ev[5].label, "end");
  EXPECT_EQ(ev[5].event.time_us, 9u);
}

TEST(TextReaderTest, AttributeErrors) {
  EXPECT_EQ(FirstErrorOfText("alloc 1 8 =red\n"), "<string>:1: attribute '=red' has no name before '='");
  EXPECT_EQ(FirstErrorOfText("alloc 1 8 t=1 t=2\n"), "<string>:1: duplicate attribute t=");
  EXPECT_EQ(FirstErrorOfText("alloc 1 8 tag=\n"), "<string>:1: empty value for tag=");
  EXPECT_EQ(FirstErrorOfText("alloc 1 8 t=soon\n"), "<string>:1: bad t=: 'soon' is not a decimal number");
  EXPECT_EQ(FirstErrorOfText("alloc 1 8 stream=-1\n"), "<string>:1: bad stream=: negative number '-1'");
  EXPECT_EQ(FirstErrorOfText("alloc 1 8 addr=0xZZ\n"),
            "<string>:1: bad addr=: '0xZZ' is not a hexadecimal address");
  EXPECT_EQ(FirstErrorOfText("alloc 1 8 shape=q8[2]\n"),
            "<string>:1: bad shape=: unknown dtype 'q8' in shape 'q8[2]'");
  EXPECT_EQ(FirstErrorOfText("program_run 1 stream=1\n"),
            "<string>:1: attribute stream= is not allowed on program_run "
            "(only on alloc, free, free_requested and free_completed)");
  EXPECT_EQ(FirstErrorOfText("program_load 1 8 shape=f32[1]\n"),
            "<string>:1: attribute shape= is not allowed on program_load (only on alloc)");
  EXPECT_EQ(FirstErrorOfText("mark x addr=5\n"),
            "<string>:1: attribute addr= is not allowed on mark (only on alloc)");
}

TEST(TextReaderTest, MissingAndExtraFields) {
  EXPECT_EQ(FirstErrorOfText("alloc\n"), "<string>:1: missing <id> in 'alloc <id> <bytes> [attrs]'");
  EXPECT_EQ(FirstErrorOfText("alloc 1 tag=x\n"),
            "<string>:1: missing <bytes> in 'alloc <id> <bytes> [attrs]'");
  EXPECT_EQ(FirstErrorOfText("program_load 1\n"),
            "<string>:1: missing <bytes> in 'program_load <pid> <bytes> [attrs]'");
  EXPECT_EQ(FirstErrorOfText("program_run t=1\n"),
            "<string>:1: missing <pid> in 'program_run <pid> [attrs]'");
  EXPECT_EQ(FirstErrorOfText("mark end of epoch\n"),
            "<string>:1: unexpected extra field 'of' in 'mark <label> [attrs]'");
  EXPECT_EQ(FirstErrorOfText("alloc 1 8 t=1 x\n"),
            "<string>:1: unexpected extra field 'x' in 'alloc <id> <bytes> [attrs]'");
  EXPECT_EQ(FirstErrorOfText("alloc 1 " + std::string(100, '9') + "\n"),
            "<string>:1: bad <bytes>: '" + std::string(100, '9') + "' does not fit in 64 bits");
  EXPECT_EQ(FirstErrorOfText(std::string(70, 'z') + "\n"),
            "<string>:1: unknown event '" + std::string(64, 'z') +
                "...' (70 bytes) (expected alloc, free, free_requested, free_completed, program_load, "
                "program_run, program_unload or mark)");
}

TEST(TextReaderTest, Metadata) {
  absl::StatusOr<std::unique_ptr<TextTraceReader>> reader = TextTraceReader::FromString(
      "\n# hbmsim-trace v1\n#source:  torch snapshot gen4  \n# a plain comment\n\n"
      "# device_bytes: 85899345920\n# not a key: has spaces\n# empty:\nalloc 1 8\n# late: ignored\nfree 1\n");
  ASSERT_TRUE(reader.ok()) << reader.status();
  const TraceMetadata& md = (*reader)->metadata();
  EXPECT_TRUE(md.has_version_header);
  ASSERT_EQ(md.entries.size(), 3u);
  EXPECT_EQ(*md.Find("source"), "torch snapshot gen4");
  EXPECT_EQ(*md.Find("device_bytes"), "85899345920");
  EXPECT_EQ(*md.Find("empty"), "");
  EXPECT_EQ(md.Find("late"), nullptr);
  ASSERT_TRUE(ReadAll(**reader).ok());
  EXPECT_EQ(md.entries.size(), 3u);  // comments after the first event are not metadata
}

TEST(TextReaderTest, VersionHeader) {
  absl::StatusOr<std::unique_ptr<TextTraceReader>> bare = TextTraceReader::FromString("alloc 1 8\n");
  ASSERT_TRUE(bare.ok());
  EXPECT_FALSE((*bare)->metadata().has_version_header);
  EXPECT_EQ(FirstErrorOfText("# hbmsim-trace v2\nalloc 1 8\n"),
            "<string>:1: unsupported trace format version 'v2' (this reader reads '# hbmsim-trace v1')");
  EXPECT_EQ(FirstErrorOfText("\n# hbmsim-trace\n"),
            "<string>:2: missing version in '# hbmsim-trace' header (expected v1)");
  // Only the first comment names the version; later it is an ordinary comment.
  EXPECT_EQ(FirstErrorOfText("# source: x\n# hbmsim-trace v2\nalloc 1 8\n"), "no error");
}

TEST(TextReaderTest, CommentsAndBlankLinesAreNotEvents) {
  absl::StatusOr<std::unique_ptr<TextTraceReader>> reader = TextTraceReader::FromString(
      "# hbmsim-trace v1\n\nalloc 1 8\n   # indented comment\n\t\n  alloc 2 8  \nfree 1\n", "mem.trace");
  ASSERT_TRUE(reader.ok());
  Event e;
  std::vector<std::string> seen;
  while (*(*reader)->Next(e)) {
    seen.push_back(fmt::format("{}@{}#{}", e.id, (*reader)->Location(), (*reader)->event_index()));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"1@mem.trace:3#0", "2@mem.trace:6#1", "1@mem.trace:7#2"}));
}

TEST(TextReaderTest, CrlfLineEndings) {
  std::vector<OwnedEvent> ev =
      EventsOf("# hbmsim-trace v1\r\n# source: win\r\nalloc 1 10 tag=x\r\n\r\nmark done\r\n");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].tag, "x");
  EXPECT_EQ(ev[1].label, "done");
}

TEST(TextReaderTest, HostileBytes) {
  constexpr char kNul[] = "alloc 1 8\nalloc 2 8 tag=a\0b\n";
  EXPECT_EQ(FirstErrorOfText(std::string(kNul, sizeof(kNul) - 1)),
            "<string>:2: NUL byte in line (is this a binary file?)");
  // The one-pass parser reads words: a NUL deep in a long tag, right after a
  // number, or at the end of a short line must still reach the NUL check.
  constexpr char kNulInWords[] = "alloc 1 8 tag=activation_\0_checkpoint t=3\n";
  constexpr char kNulAfterNumber[] = "free 1\0\n";
  constexpr char kNulAtEnd[] = "alloc 1 8 t=1 tag=abcdefg\0\n";
  for (const auto& [text, size] : {std::pair{kNulInWords, sizeof(kNulInWords)},
                                   std::pair{kNulAfterNumber, sizeof(kNulAfterNumber)},
                                   std::pair{kNulAtEnd, sizeof(kNulAtEnd)}}) {
    EXPECT_EQ(FirstErrorOfText(std::string(text, size - 1)), "<string>:1: NUL byte in line (is this a binary file?)");
  }
  EXPECT_EQ(FirstErrorOfText("alloc 1 8 tag=\xc3\x28\n"), "<string>:1: tag= is not valid UTF-8");
  EXPECT_EQ(FirstErrorOfText("mark \xed\xa0\x80\n"),
            "<string>:1: mark label is not valid UTF-8");  // a surrogate
  EXPECT_EQ(FirstErrorOfText("# k: \xff\nalloc 1 8\n"), "<string>:1: metadata line is not valid UTF-8");
  EXPECT_EQ(FirstErrorOfText("alloc 1 8 tag=caf\xc3\xa9 \nmark \xf0\x9f\x9a\x80\n"), "no error");
}

TEST(TextReaderTest, LongLineIsCapped) {
  EXPECT_EQ(FirstErrorOfText("alloc 1 8\nmark " + std::string(LineReader::kMaxLineBytes, 'x') + "\n"),
            "<string>:2: line longer than 1048576 bytes");
}

// A TensorFlow log handed over as a trace (a BFC dump is one) is named as
// such, with the command that reads it; other lines keep the plain message.
TEST(TextReaderTest, ATensorFlowLogIsNamedAsOne) {
  for (const char* line :
       {"2021-03-15 17:16:57.309165: W tensorflow/core/common_runtime/bfc_allocator.cc:433] Allocator (GPU_0_bfc) ran "
        "out of memory trying to allocate 18.00MiB",
        "I tensorflow/core/common_runtime/bfc_allocator.cc:643] Bin (4096): \tTotal Chunks: 0",
        "9:07:50.044545: W external/local_xla/xla/tsl/framework/bfc_allocator.cc:501] Allocator (GPU_0_bfc) ran out",
        "Current allocation summary follows."}) {
    const std::string first(std::string_view(line).substr(0, std::string_view(line).find(' ')));
    const std::string expected = "unknown event '" + first +
                                 "': a line of a TensorFlow log, not an event; `hbmsim diagnose` reads the "
                                 "out-of-memory dump of a BFC allocator's log";
    // As the first event line, when the file is opened (before any command
    // asks for an allocator or a limit); further on, where it is read.
    EXPECT_EQ(TextTraceReader::FromString(std::string(line) + "\n").status().message(), "<string>:1: " + expected)
        << line;
    absl::StatusOr<std::unique_ptr<TextTraceReader>> reader =
        TextTraceReader::FromString("alloc 1 256\n" + std::string(line) + "\n");
    ASSERT_TRUE(reader.ok()) << reader.status();
    Event e;
    ASSERT_TRUE((*reader)->Next(e).ok());
    EXPECT_EQ((*reader)->Next(e).status().message(), "<string>:2: " + expected) << line;
  }
}

// A training log whose BFC dump comes after other output: the error on its
// first line also names the first line of the TensorFlow log.
TEST(TextReaderTest, ALogWithATensorFlowPartFurtherOnIsNamedAtOpen) {
  EXPECT_EQ(TextTraceReader::FromString("# a header\nEpoch 1/10\n\n# not tensorflow/ (a comment)\n2023-10-02 12:00:00.000001: W "
                                        "tensorflow/tsl/framework/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran "
                                        "out of memory trying to allocate 1.00GiB\n")
                .status()
                .message(),
            "<string>:2: unknown event 'Epoch' (expected alloc, free, free_requested, free_completed, program_load, "
            "program_run, program_unload or mark); line 5 is a line of a TensorFlow log: `hbmsim diagnose` reads the "
            "out-of-memory dump of a BFC allocator's log");
  // Without one, the plain message.
  EXPECT_EQ(TextTraceReader::FromString("Epoch 1/10\nloss: 0.31\n").status().message(),
            "<string>:1: unknown event 'Epoch' (expected alloc, free, free_requested, free_completed, program_load, "
            "program_run, program_unload or mark)");
}

// After an error, reading goes on with the next line, and the rejected line
// changed nothing: what a --lenient replay relies on.
TEST(TextReaderTest, ReadingGoesOnAfterAnError) {
  absl::StatusOr<std::unique_ptr<TextTraceReader>> reader =
      TextTraceReader::FromString("alloc 1 8\nfree 2\nbogus\nfree 1\n");
  ASSERT_TRUE(reader.ok());
  Event e;
  EXPECT_TRUE(*(*reader)->Next(e));
  EXPECT_EQ((*reader)->Next(e).status().message(), "<string>:2: free of id 2 that is not live");
  EXPECT_EQ((*reader)->Next(e).status().message(),
            "<string>:3: unknown event 'bogus' (expected alloc, free, free_requested, free_completed, "
            "program_load, program_run, program_unload or mark)");
  absl::StatusOr<bool> last = (*reader)->Next(e);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_TRUE(*last);
  EXPECT_EQ(e.id, 1u);
  EXPECT_EQ((*reader)->event_index(), 3u);
  EXPECT_FALSE(*(*reader)->Next(e));
}

TEST(TextReaderTest, CannotOpen) {
  absl::StatusOr<std::unique_ptr<TextTraceReader>> missing = TextTraceReader::Open("/nonexistent/x.trace");
  EXPECT_EQ(missing.status().message(), "cannot open /nonexistent/x.trace: No such file or directory");
  absl::StatusOr<std::unique_ptr<TextTraceReader>> dir = TextTraceReader::Open("/tmp");
  EXPECT_EQ(dir.status().message(), "cannot open /tmp: Is a directory");
}

}  // namespace
}  // namespace hbmsim
