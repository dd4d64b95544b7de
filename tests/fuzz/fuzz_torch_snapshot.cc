// libFuzzer target: the PyTorch snapshot importer (trace/torch) as `hbmsim
// replay`/`convert` use it: unpickle, parse every generation's keys, rebuild
// the start state of each device, and read every device's trace as events.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "tests/fuzz/fuzz_util.h"
#include "trace/pickle/unpickler.h"
#include "trace/torch/initial_state.h"
#include "trace/torch/snapshot.h"
#include "trace/torch/snapshot_events.h"

// Not checked: that RebuildInitialState's blocks tile each segment. A file
// whose blocks overlap yields overlapping blocks there; the seeded torch
// replay refuses them ("blocks sum to N bytes, not the segment's M", exit 2)
// and the event reader only passes their addresses on as addr=.
using namespace hbmsim;

HBMSIM_FUZZ_ENTRY(torch_snapshot, TorchSnapshotFuzzCorpus) {
  const std::string name = "fuzz.pickle";
  absl::StatusOr<PickleTree> tree = Unpickle(fuzz::AsString(data, size), name);
  if (!tree.ok()) return 0;  // the pickle target covers the unpickler's errors
  absl::StatusOr<Snapshot> parsed = ParseSnapshot(*tree);
  if (!parsed.ok()) {
    fuzz::CheckErrorMessage(parsed.status(), name);
    return 0;
  }
  auto snap = std::make_shared<const Snapshot>(*std::move(parsed));
  std::vector<DeviceId> devices = DevicesWithTraces(*snap);
  for (DeviceId device : devices) (void)RebuildInitialState(*snap, device);
  SnapshotEventReader reader(snap, devices);
  for (size_t i = 0; i < devices.size(); ++i) {
    (void)reader.StartSegments(i);
    (void)reader.Start(i);
    (void)reader.CapacityAtFirstOom(i);
  }
  // Each trace entry or start block yields at most two events.
  uint64_t max_calls = 4;
  for (const SnapshotSegment& segment : snap->segments) max_calls += 2 * segment.blocks.size();
  for (const DeviceTrace& trace : snap->device_traces) max_calls += 2 * trace.entries.size();
  fuzz::DrainReader(reader, name, fuzz::AfterError::kStop, max_calls);
  return 0;
}
