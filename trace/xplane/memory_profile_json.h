// XProf's memory-profile tool output (`<host>.memory_profile.json.gz`, written
// beside the XSpace by older TensorFlow releases, gzip-compressed JSON; a
// plain .json is read too), as a Profile (profile.h):
//
//   {"memoryProfilePerAllocator": {"GPU_0_bfc": {"memoryProfileSnapshots": [
//      {"timeOffsetPs": "300009400000",
//       "aggregationStats": {"heapAllocatedBytes", "freeMemoryBytes", "stackReservedBytes",
//                            "fragmentation", "peakBytesInUse"},
//       "activityMetadata": {"memoryActivity": "ALLOCATION"|"DEALLOCATION", "requestedBytes",
//                            "allocationBytes", "address", "tfOpName", "stepId", "regionType",
//                            "dataType", "tensorShape"}}, ...]}, ...}}
//
// Numbers are JSON strings (proto3 JSON of int64) or numbers. Mapping onto
// the XSpace's stats: heapAllocatedBytes = bytes_allocated, freeMemoryBytes =
// bytes_available, stackReservedBytes = bytes_reserved; timeOffsetPs is the
// event's offset from its line's start (the XSpace adds the line's
// timestamp_ns, a constant per file, which is why the trace's t= counts from
// the profile's first memory record). XProf copies an allocation's op, step
// and shape onto its deallocation; the step of an allocation is stepId.
//
// Errors: a gzip stream that is cut or corrupt names the compressed byte
// offset; JSON that does not parse names the byte offset in the
// decompressed text; a snapshot missing memoryActivity names its path.
#ifndef HBMSIM_TRACE_XPLANE_MEMORY_PROFILE_JSON_H_
#define HBMSIM_TRACE_XPLANE_MEMORY_PROFILE_JSON_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "trace/xplane/profile.h"

namespace hbmsim::trace::xplane {

// `bytes` is the file: gzip (magic 1f 8b) or the JSON itself.
absl::StatusOr<Profile> ParseMemoryProfile(std::string_view bytes, std::string_view source);

absl::StatusOr<Profile> ReadMemoryProfileFile(const std::string& path);

// True for a gzip stream (the caller then checks the content) or JSON that
// opens with "memoryProfilePerAllocator" within its first bytes.
bool LooksLikeMemoryProfileJson(std::string_view head);

// The most a memory_profile.json.gz may inflate to: XProf keeps at most 1000
// snapshots per allocator, a few MB; a gigabyte is a hostile or broken file.
inline constexpr size_t kMaxMemoryProfileJsonBytes = size_t{1} << 30;

}  // namespace hbmsim::trace::xplane

#endif  // HBMSIM_TRACE_XPLANE_MEMORY_PROFILE_JSON_H_
