// A pprof `perftools.profiles.Profile` as decoded from its wire format, with
// the fields a device memory profile uses (the public profile.proto's field
// numbers); mappings, comments and times are skipped. Nothing is resolved
// here: ids and string indices are as written, each with the byte offset of
// its message so the checks that resolve them (device_profile.h) can say
// where a dangling one is.
//
//   Profile  1 sample_type: ValueType {1 type, 2 unit}   (string indices)
//            2 sample: {1 location_id*, 2 value*, 3 label: {1 key, 2 str, 3 num}}
//            4 location: {1 id, 4 line: {1 function_id, 2 line}}
//            5 function: {1 id, 2 name, 4 filename}
//            6 string_table*  (string 0 is "")
#ifndef HBMSIM_TRACE_PPROF_PROFILE_H_
#define HBMSIM_TRACE_PPROF_PROFILE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace hbmsim::trace::pprof {

struct ValueType {
  uint64_t type = 0;  // string index
  uint64_t unit = 0;
};

struct Label {
  uint64_t key = 0;
  uint64_t str = 0;  // 0: a numeric label
  int64_t num = 0;
  size_t offset = 0;
};

struct Sample {
  std::vector<uint64_t> location_ids;  // innermost first
  std::vector<int64_t> values;         // one per sample_type
  std::vector<Label> labels;
  size_t offset = 0;
};

struct Line {
  uint64_t function_id = 0;
  int64_t line = 0;
};

struct Location {
  uint64_t id = 0;
  std::vector<Line> lines;  // line[i] is inlined into line[i + 1]
  size_t offset = 0;
};

struct Function {
  uint64_t id = 0;
  uint64_t name = 0;  // string indices
  uint64_t filename = 0;
  size_t offset = 0;
};

struct Profile {
  std::vector<ValueType> sample_types;
  std::vector<Sample> samples;
  std::vector<Location> locations;
  std::vector<Function> functions;
  std::vector<std::string_view> strings;  // views into the decoded buffer
};

// Decodes `bytes` (the decompressed profile; the result's strings point into
// it). Errors: InvalidArgument "byte offset N: WHAT". Every list is bounded
// by the bytes that encode it, so memory stays proportional to the input.
absl::StatusOr<Profile> DecodeProfile(std::string_view bytes);

}  // namespace hbmsim::trace::pprof

#endif  // HBMSIM_TRACE_PPROF_PROFILE_H_
