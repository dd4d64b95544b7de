// libFuzzer target: a JAX device memory profile (trace/pprof), gzipped or
// raw pprof, into its held state; then every device's events read to the
// end under the trace rules. Oracles: an error names the file; the events of
// a device add up to its buffers' bytes exactly (a group of N buffers is
// split, never rounded).
#include <cstddef>
#include <cstdint>

#include "fmt/format.h"
#include "tests/fuzz/fuzz_util.h"
#include "trace/pprof/device_profile.h"
#include "trace/pprof/held_events.h"

HBMSIM_FUZZ_ENTRY(pprof, PprofFuzzCorpus) {
  using namespace hbmsim;
  const std::string name = "fuzz.prof";
  const std::string bytes = fuzz::AsString(data, size);
  absl::StatusOr<HeldState> held = pprof::ParseDeviceProfile(bytes, name);
  if (!held.ok()) {
    fuzz::CheckErrorMessage(held.status(), name);
    return 0;
  }
  const TraceMetadata metadata;
  for (const HeldDevice& d : held->devices) {
    uint64_t want = 0, count = 0;
    for (const HeldEntry& e : d.entries) {
      if (!pprof::PlacedAsEvents(e)) continue;
      want += static_cast<uint64_t>(e.bytes);
      count += e.count;
    }
    std::unique_ptr<EventReader> reader = pprof::MakeHeldEventReader(*held, metadata, d.device, name);
    uint64_t got = 0, n = 0;
    Event e;
    while (reader->Next(e).value_or(false)) {
      got += e.bytes.value();
      ++n;
    }
    if (got != want || n != count) {
      fuzz::Fail(fmt::format("device {}: events hold {} B in {} allocs, entries {} B in {}", d.device.value(),
                             got, n, want, count));
    }
  }
  std::unique_ptr<EventReader> all = pprof::MakeHeldEventReader(*held, metadata, std::nullopt, name);
  fuzz::DrainReader(*all, name, fuzz::AfterError::kStop, pprof::kMaxHeldBuffers + 2);
  return 0;
}
