#include "trace/core/trace_format.h"

namespace hbmsim::trace {

// A switch with no default: gcc's -Wswitch (on with -Wall) names an
// enumerator added above without a name here.
std::string_view TraceFormatName(TraceFormat format) {
  switch (format) {
    case TraceFormat::kTorchSnapshot:
      return "torch-snapshot";
    case TraceFormat::kBinary:
      return "binary";
    case TraceFormat::kXplane:
      return "xplane";
    case TraceFormat::kJaxDeviceProfile:
      return "jax-device-profile";
    case TraceFormat::kMemoryProfile:
      return "memory-profile";
    case TraceFormat::kXlaProto:
      return "xla-proto";
    case TraceFormat::kRmmLog:
      return "rmm-log";
    case TraceFormat::kXlaText:
      return "xla-text";
    case TraceFormat::kCsappRep:
      return "csapp-rep";
    case TraceFormat::kStallocMemLog:
      return "stalloc-mem-log";
    case TraceFormat::kText:
      return "text";
  }
  return "unknown";  // not reached: every enumerator has its case
}

}  // namespace hbmsim::trace
