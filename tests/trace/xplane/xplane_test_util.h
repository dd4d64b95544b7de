// What the xplane tests share: where the shared profiles are, and the
// matched/total line of a replay's recorded figures.
#pragma once

#include <string>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace hbmsim::trace::xplane {

inline const std::string kSharedProfiles = std::string(HBMSIM_SHARED_DIR) + "/profiler/";

// "address M/T; chunk_size M/T; ..." from replay --json's recording.recorded_figures.
inline std::string RecordedFigureCounts(const nlohmann::json& j) {
  std::string out;
  for (const char* m : {"address", "chunk_size", "bytes_in_use", "fragmentation", "peak_bytes_in_use"}) {
    const nlohmann::json& c = j["recording"]["recorded_figures"][m];
    out += fmt::format("{} {}/{}; ", m, c["matched"].get<int>(), c["total"].get<int>());
  }
  return out;
}

}  // namespace hbmsim::trace::xplane
