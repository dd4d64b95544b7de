// Throughput of the text trace format: reading (tokenizing, parsing and
// validating) and canonical writing of a generated trace of 1.12 M events,
// written once to a temporary file. Target: >= 200 MB/s reading.
// Rates are per CPU second of the benchmark thread (read(2) time included):
// on a shared machine wall time measures the neighbours as much as the code.
//
//   build-text/bench/trace/trace_bench
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <random>
#include <string>

#include "benchmark/benchmark.h"
#include "fmt/format.h"
#include "sim/all_layers.h"
#include "trace/text/text_reader.h"
#include "trace/text/text_writer.h"

namespace hbmsim {
namespace {

constexpr int kAllocs = 450'000;  // with frees and marks: 1.12 M events
constexpr size_t kMaxLive = 1000;
constexpr uint64_t kSeed = 20261122;

struct GeneratedTrace {
  std::string path;
  uint64_t bytes = 0;
  uint64_t events = 0;
};

GeneratedTrace& Trace() {
  static GeneratedTrace trace;
  return trace;
}

// A training-like mix: allocs with time, stream, tag and sometimes a shape;
// plain frees and queued frees; a mark every 1000 allocs.
std::string GenerateText(uint64_t& events) {
  std::mt19937_64 rng(kSeed);
  std::string text = "# hbmsim-trace v1\n# source: trace_bench generator\n";
  auto out = std::back_inserter(text);
  std::deque<uint64_t> live;
  const char* tags[] = {"activation", "weights", "grad", "optimizer_state", "workspace"};
  uint64_t t = 0;
  for (uint64_t id = 0; id < kAllocs; ++id) {
    t += rng() % 50;
    const uint64_t bytes = uint64_t{512} << (rng() % 16);
    fmt::format_to(out, "alloc {} {} t={} stream={} tag={}", id, bytes, t, rng() % 4, tags[rng() % 5]);
    if (rng() % 4 == 0) fmt::format_to(out, " shape=bf16[{},{}]", bytes / 256, 128);
    text += '\n';
    live.push_back(id);
    ++events;
    if (live.size() >= kMaxLive || rng() % 3 != 0) {
      const uint64_t victim = live.front();
      live.pop_front();
      if (rng() % 2 == 0) {
        fmt::format_to(out, "free {} t={}\n", victim, t);
        ++events;
      } else {
        fmt::format_to(out, "free_requested {} t={}\nfree_completed {} t={}\n", victim, t, victim, t + 1);
        t += 1;
        events += 2;
      }
    }
    if (id % 1000 == 999) {
      fmt::format_to(out, "mark step={}\n", id / 1000);
      ++events;
    }
  }
  return text;
}

void WriteTraceFile() {
  GeneratedTrace& trace = Trace();
  char path[] = "/tmp/hbmsim_trace_bench_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) std::abort();
  close(fd);
  const std::string text = GenerateText(trace.events);
  std::ofstream(path, std::ios::binary) << text;
  trace.path = path;
  trace.bytes = text.size();
}

void BM_ReadTextTraceFile(benchmark::State& state) {
  const GeneratedTrace& trace = Trace();
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<TextTraceReader>> reader = TextTraceReader::Open(trace.path);
    if (!reader.ok()) state.SkipWithError(std::string(reader.status().message()).c_str());
    Event e;
    uint64_t events = 0;
    while (true) {
      absl::StatusOr<bool> got = (*reader)->Next(e);
      if (!got.ok()) state.SkipWithError(std::string(got.status().message()).c_str());
      if (!got.ok() || !*got) break;
      ++events;
    }
    if (events != trace.events) state.SkipWithError("wrong event count");
    benchmark::DoNotOptimize(events);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * trace.bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * trace.events));
}
BENCHMARK(BM_ReadTextTraceFile)->Unit(benchmark::kMillisecond);

// Discards what it is given, so the writer's formatting is what is measured.
class NullBuf : public std::streambuf {
 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
  int overflow(int c) override { return c; }
};

void BM_WriteTextTrace(benchmark::State& state) {
  const GeneratedTrace& trace = Trace();
  // The events, owned, read once outside the timed loop.
  std::vector<OwnedEvent> events;
  events.reserve(trace.events);
  absl::StatusOr<std::unique_ptr<TextTraceReader>> reader = TextTraceReader::Open(trace.path);
  Event e;
  while (reader.ok() && *(*reader)->Next(e)) events.push_back(OwnedEvent::Own(e));
  for (OwnedEvent& o : events) o.get();
  for (auto _ : state) {
    NullBuf null;
    std::ostream out(&null);
    TextTraceWriter writer(out);
    if (!writer.WriteHeader((*reader)->metadata()).ok()) state.SkipWithError("header");
    for (const OwnedEvent& o : events) {
      if (!writer.Write(o.event).ok()) state.SkipWithError("write");
    }
    if (!writer.Flush().ok()) state.SkipWithError("flush");
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * trace.bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * trace.events));
}
BENCHMARK(BM_WriteTextTrace)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hbmsim

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  hbmsim::WriteTraceFile();
  const hbmsim::GeneratedTrace& trace = hbmsim::Trace();
  std::fprintf(stderr, "trace: %llu events, %llu bytes, seed %llu\n",
               static_cast<unsigned long long>(trace.events), static_cast<unsigned long long>(trace.bytes),
               static_cast<unsigned long long>(hbmsim::kSeed));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::remove(trace.path.c_str());
  return 0;
}
