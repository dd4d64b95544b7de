#include "trace/xplane/profile.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace hbmsim::trace::xplane {

std::string DataTypeName(int64_t number) {
  // tensorflow/core/framework/types.proto, spelled as DataTypeString prints them.
  static constexpr std::array<std::string_view, 24> kNames = {
      "INVALID",   "float",  "double",     "int32", "uint8",    "int16",   "int8",     "string",
      "complex64", "int64",  "bool",       "qint8", "quint8",   "qint32",  "bfloat16", "qint16",
      "quint16",   "uint16", "complex128", "half",  "resource", "variant", "uint32",   "uint64"};
  if (number >= 0 && number < static_cast<int64_t>(kNames.size())) return std::string(kNames[number]);
  return std::to_string(number);
}

void FinishProfile(Profile& p) {
  for (AllocatorRecording& a : p.allocators) {
    std::stable_sort(a.records.begin(), a.records.end(),
                     [](const MemoryRecord& x, const MemoryRecord& y) { return x.time_ps < y.time_ps; });
    a.allocations =
        std::count_if(a.records.begin(), a.records.end(), [](const MemoryRecord& r) { return r.allocation; });
    a.deallocations = static_cast<int64_t>(a.records.size()) - a.allocations;
  }
  std::sort(p.allocators.begin(), p.allocators.end(),
            [](const AllocatorRecording& x, const AllocatorRecording& y) { return x.name < y.name; });
}

}  // namespace hbmsim::trace::xplane
