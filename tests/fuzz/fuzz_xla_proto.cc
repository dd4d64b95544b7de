// libFuzzer target: XLA's HeapSimulatorTrace inside a serialized
// BufferAssignmentProto or HloProto (trace/xla), parsed and read to the end.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_util.h"
#include "trace/xla/heap_trace_proto.h"
#include "trace/xla/xla_trace.h"

HBMSIM_FUZZ_ENTRY(xla_proto, XlaProtoFuzzCorpus) {
  using namespace hbmsim;
  const std::string name = "fuzz.pb";
  absl::StatusOr<xla::XlaTrace> trace = xla::ParseHeapSimulatorProto(fuzz::AsString(data, size), name);
  if (!trace.ok()) {
    fuzz::CheckErrorMessage(trace.status(), name);
    return 0;
  }
  const uint64_t events = trace->events.size();
  xla::XlaEventReader reader(*std::move(trace));
  fuzz::DrainReader(reader, name, fuzz::AfterError::kStop, events + 2);
  return 0;
}
