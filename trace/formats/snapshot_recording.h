// The Recordings of formats held whole in memory: PyTorch snapshots (a start
// state, settings, OOMs and several devices) and XLA's compile-time dumps
// (one program, one device per heap), TF/JAX profiles.
#ifndef HBMSIM_TRACE_FORMATS_SNAPSHOT_RECORDING_H_
#define HBMSIM_TRACE_FORMATS_SNAPSHOT_RECORDING_H_

#include <memory>
#include <string>

#include "trace/formats/recording.h"
#include "trace/pickle/pickle_tree.h"

namespace hbmsim::trace {

absl::StatusOr<std::unique_ptr<Recording>> OpenSnapshotRecording(const std::string& path);
// A snapshot already unpickled (or built from Python objects), named `name`.
absl::StatusOr<std::unique_ptr<Recording>> OpenSnapshotTreeRecording(const std::string& name,
                                                                    const PickleTree& tree);
absl::StatusOr<std::unique_ptr<Recording>> OpenXlaTextRecording(const std::string& path);
absl::StatusOr<std::unique_ptr<Recording>> OpenXlaProtoRecording(const std::string& path);
// TF/JAX profiles: one device per BFC allocator (trace/formats/xplane_recording.cc).
absl::StatusOr<std::unique_ptr<Recording>> OpenXplaneRecording(const std::string& path);
absl::StatusOr<std::unique_ptr<Recording>> OpenMemoryProfileRecording(const std::string& path);
// A JAX device memory profile (pprof): a held state, one device per label
// (trace/formats/pprof_recording.cc).
absl::StatusOr<std::unique_ptr<Recording>> OpenDeviceProfileRecording(const std::string& path);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_FORMATS_SNAPSHOT_RECORDING_H_
