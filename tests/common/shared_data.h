// Where the shared recordings are: ../shared beside the repository, as
// hbmsim_test (tests/CMakeLists.txt) passes it in HBMSIM_SHARED_DIR.
#pragma once

#include <string>

namespace hbmsim {

inline const std::string kSharedTorchSnapshots = std::string(HBMSIM_SHARED_DIR) + "/torch_snapshots/";

}  // namespace hbmsim
