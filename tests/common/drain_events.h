// Reads a trace reader to its end for tests that compare events as strings.
#ifndef HBMSIM_TESTS_COMMON_DRAIN_EVENTS_H_
#define HBMSIM_TESTS_COMMON_DRAIN_EVENTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/all_layers.h"
#include "trace/core/event.h"
#include "trace/core/reader.h"

namespace hbmsim::testing {

// Every event of `reader` as `format(event)` gives it; a read error ends the
// list as "error: <message>", so a test asserts events and error in one go.
template <typename Format>
std::vector<std::string> DrainEvents(EventReader& reader, Format format) {
  std::vector<std::string> out;
  Event e;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(e);
    if (!more.ok()) {
      out.push_back("error: " + std::string(more.status().message()));
      return out;
    }
    if (!*more) return out;
    out.push_back(format(e));
  }
}

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_COMMON_DRAIN_EVENTS_H_
