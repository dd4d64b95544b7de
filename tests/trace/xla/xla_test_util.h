// Events as one-line strings, so tests compare whole traces exactly.
#ifndef HBMSIM_TESTS_XLA_XLA_TEST_UTIL_H_
#define HBMSIM_TESTS_XLA_XLA_TEST_UTIL_H_

#include <string>
#include <vector>

#include "fmt/format.h"
#include "trace/xla/xla_trace.h"

namespace hbmsim::trace::xla {

inline const std::string kXlaData = std::string(HBMSIM_SOURCE_DIR) + "/tests/data/xla/";

// "t3 alloc 3 1024 addr=2560 tag=mul.2" / "t3 free 1" (+ " dev=1" off device 0).
inline std::vector<std::string> EventLines(XlaTrace& trace) {
  std::vector<std::string> out;
  for (OwnedEvent& o : trace.events) {
    const Event& e = o.get();
    std::string line = fmt::format("t{} {} {}", e.time_us.value_or(999), EventKindName(e.kind), e.id);
    if (e.kind == EventKind::kAlloc) line += fmt::format(" {}", e.bytes.value());
    if (e.addr) line += fmt::format(" addr={}", *e.addr);
    if (!e.tag.empty()) line += fmt::format(" tag={}", e.tag);
    if (e.device.value() != 0) line += fmt::format(" dev={}", e.device.value());
    out.push_back(line);
  }
  return out;
}

// The largest sum of live alloc sizes over the event order.
inline uint64_t PeakLiveBytes(XlaTrace& trace, uint32_t device = 0) {
  std::vector<std::pair<uint64_t, uint64_t>> live;  // id, bytes
  uint64_t now = 0, peak = 0;
  for (OwnedEvent& o : trace.events) {
    const Event& e = o.get();
    if (e.device.value() != device) continue;
    if (e.kind == EventKind::kAlloc) {
      live.emplace_back(e.id, e.bytes.value());
      now += e.bytes.value();
      peak = std::max(peak, now);
    } else {
      for (size_t i = 0; i < live.size(); ++i) {
        if (live[i].first == e.id) {
          now -= live[i].second;
          live.erase(live.begin() + static_cast<long>(i));
          break;
        }
      }
    }
  }
  return peak;
}

}  // namespace hbmsim::trace::xla

#endif  // HBMSIM_TESTS_XLA_XLA_TEST_UTIL_H_
