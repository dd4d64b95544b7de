// Seeded randomized tests of the text format: random valid event sequences
// survive write -> read -> write unchanged, and random hostile bytes never
// crash the reader and always yield "<name>:<line>: ..." errors. Each failure
// names its seed.
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/trace/text/trace_test_util.h"
#include "trace/text/text_writer.h"

namespace hbmsim {
namespace {

constexpr int kSeeds = 20;

class EventGenerator {
 public:
  explicit EventGenerator(uint64_t seed) : rng_(seed) {}

  OwnedEvent Next() {
    OwnedEvent o;
    Event& e = o.event;
    const uint64_t device = Pick(3) == 0 ? Pick(3) : 0;
    e.device = DeviceId(device);
    if (Pick(2) == 0) {
      time_ += Pick(4) == 0 ? 0 : Pick(1000);
      e.time_us = time_;
    }
    std::vector<uint64_t>& live = live_[device];
    std::vector<uint64_t>& pending = pending_[device];
    const uint64_t choice = Pick(10);
    if (choice < 4 || live.empty()) {
      MakeAlloc(o, live);
    } else if (choice < 6) {
      e.kind = EventKind::kFree;
      e.id = TakeRandom(live);
      if (Pick(2) == 0) e.stream = StreamId(Pick(8));
    } else if (choice < 7) {
      e.kind = EventKind::kFreeRequested;
      e.id = TakeRandom(live);
      pending.push_back(e.id);
    } else if (choice < 8 && !pending.empty()) {
      e.kind = EventKind::kFreeCompleted;
      e.id = TakeRandom(pending);
    } else if (choice < 9) {
      MakeProgramEvent(o);
    } else {
      e.kind = EventKind::kMark;
      o.label = Pick(2) == 0 ? fmt::format("step={}", Pick(100)) : "phase_\xc3\xa9nd";
    }
    o.get();
    return o;
  }

 private:
  uint64_t Pick(uint64_t n) { return rng_() % n; }

  uint64_t TakeRandom(std::vector<uint64_t>& ids) {
    const size_t i = Pick(ids.size());
    const uint64_t id = ids[i];
    ids[i] = ids.back();
    ids.pop_back();
    return id;
  }

  void MakeAlloc(OwnedEvent& o, std::vector<uint64_t>& live) {
    static const char* const kDTypes[] = {"f32", "bf16", "s8", "pred", "c128", "f8e4m3fn", "u4", "float"};
    Event& e = o.event;
    e.kind = EventKind::kAlloc;
    e.id = Pick(2) == 0 ? next_id_++ : (uint64_t{1} << 63) + next_id_++;
    e.bytes = Bytes(Pick(8) == 0 ? UINT64_MAX - Pick(10) : Pick(1 << 30));
    if (Pick(2) == 0) e.stream = StreamId(Pick(8));
    if (Pick(2) == 0) o.tag = Pick(2) == 0 ? "weights" : "op:matmul/\xe2\x9c\x93";
    if (Pick(3) == 0) {
      e.shape = *ParseShape(fmt::format("{}[{},{}]", kDTypes[Pick(8)], Pick(5000), Pick(3)));
    }
    if (Pick(3) == 0) e.addr = rng_();
    live.push_back(e.id);
  }

  void MakeProgramEvent(OwnedEvent& o) {
    Event& e = o.event;
    e.device = DeviceId(0);
    if (loaded_.empty() || Pick(3) == 0) {
      e.kind = EventKind::kProgramLoad;
      e.id = next_program_++;
      e.bytes = Bytes(Pick(1 << 20));
      if (Pick(2) == 0) o.tag = "exe";
      loaded_.push_back(e.id);
    } else if (Pick(2) == 0) {
      e.kind = EventKind::kProgramRun;
      e.id = loaded_[Pick(loaded_.size())];
    } else {
      e.kind = EventKind::kProgramUnload;
      e.id = TakeRandom(loaded_);
    }
  }

  std::mt19937_64 rng_;
  uint64_t time_ = 0;
  uint64_t next_id_ = 0;
  uint64_t next_program_ = 0;
  std::vector<uint64_t> live_[3];
  std::vector<uint64_t> pending_[3];
  std::vector<uint64_t> loaded_;
};

std::string DescribeRoundTripped(const Event& e) {
  return fmt::format(
      "{} id={} bytes={} dev={} stream={} t={} addr={} shape={} tag={} label={}", EventKindName(e.kind), e.id,
      e.bytes.value(), e.device.value(), e.stream.value(), e.time_us ? fmt::format("{}", *e.time_us) : "-",
      e.addr ? fmt::format("{}", *e.addr) : "-", e.shape ? FormatShape(*e.shape) : "-", e.tag, e.label);
}

TEST(TextPropertyTest, RandomValidTracesRoundTrip) {
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    EventGenerator gen(seed);
    std::vector<OwnedEvent> events;
    std::ostringstream out;
    {
      TextTraceWriter writer(out);
      TraceMetadata md;
      md.entries = {{"seed", fmt::format("{}", seed)}};
      ASSERT_TRUE(writer.WriteHeader(md).ok());
      for (int i = 0; i < 2000; ++i) {
        events.push_back(gen.Next());
        ASSERT_TRUE(writer.Write(events.back().get()).ok()) << "seed " << seed;
      }
    }
    absl::StatusOr<std::unique_ptr<TextTraceReader>> reader = TextTraceReader::FromString(out.str());
    ASSERT_TRUE(reader.ok()) << "seed " << seed;
    absl::StatusOr<std::vector<OwnedEvent>> read = testing::ReadAll(**reader);
    ASSERT_TRUE(read.ok()) << "seed " << seed << ": " << read.status();
    ASSERT_EQ(read->size(), events.size()) << "seed " << seed;
    for (size_t i = 0; i < events.size(); ++i) {
      // The reader reports 0 bytes for events without a <bytes> field, as generated.
      ASSERT_EQ(DescribeRoundTripped((*read)[i].get()), DescribeRoundTripped(events[i].get())) << "seed " << seed << " event " << i;
    }
  }
}

// Random lines built from the format's own pieces and hostile bytes.
std::string HostileText(uint64_t seed) {
  using namespace std::string_view_literals;  // "\0"sv keeps its NUL
  // clang-format off
  static constexpr std::string_view kPieces[] = {
      "alloc", "a", "free", "f", "free_requested", "free_completed", "program_load", "program_run",
      "mark", "1", "2", "-1", "99999999999999999999", "2MiB", "1e3", "t=5", "t=", "stream=1",
      "tag=x", "tag=", "shape=f32[2", "shape=f32[2,]", "addr=0xZZ", "device=1", "=", "#", "# k: v",
      "\xff", "\xc3", "\0"sv, "\r", "\t", " ", "x=y", "mark step=3"};
  // clang-format on
  std::mt19937_64 rng(seed);
  std::string text;
  for (int line = 0; line < 400; ++line) {
    const int fields = static_cast<int>(rng() % 6);
    for (int f = 0; f < fields; ++f) {
      if (rng() % 20 == 0) {
        text += static_cast<char>(rng() % 256);
      } else {
        text += kPieces[rng() % std::size(kPieces)];
      }
      text += rng() % 3 == 0 ? "\t" : " ";
    }
    if (rng() % 50 == 0) text += '\0';
    text += rng() % 10 == 0 ? "\r\n" : "\n";
  }
  return text;
}

TEST(TextPropertyTest, HostileInputNeverCrashesAndAlwaysNamesTheLine) {
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    absl::StatusOr<std::unique_ptr<TextTraceReader>> reader = TextTraceReader::FromString(HostileText(seed));
    if (!reader.ok()) {
      EXPECT_EQ(reader.status().message().substr(0, 9), "<string>:") << "seed " << seed;
      continue;
    }
    Event e;
    int errors = 0;
    int calls = 0;
    for (;; ++calls) {
      ASSERT_LT(calls, 1000) << "seed " << seed << ": the reader does not terminate";
      absl::StatusOr<bool> got = (*reader)->Next(e);
      if (got.ok() && !*got) break;
      if (got.ok()) continue;
      ++errors;
      const std::string prefix = (*reader)->Location() + ": ";
      EXPECT_EQ(std::string(got.status().message()).substr(0, prefix.size()), prefix) << "seed " << seed;
    }
    EXPECT_GT(errors, 0) << "seed " << seed;
  }
}

}  // namespace
}  // namespace hbmsim
