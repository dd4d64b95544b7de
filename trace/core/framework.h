// The framework a recording says wrote it. Only profiles and XLA dumps say:
//
//   kTensorFlow  a TF profile (a tf_Compute thread; the JSON's gpu_host_bfc)
//   kJax         a JAX profile (py_xla / tf_pjrt threads, a /host:metadata
//                plane, xla_* allocators) or a JAX device memory profile
//   kXla         an XLA dump: XLA's compiler packed the program, whichever
//                framework ran it
//   kUnknown     every other recording (a PyTorch snapshot, a trace, a TPU
//                runtime's profile)
//
// The bfc row turns a profile's framework into options, offline's row an XLA
// dump's into rules=xla (sim/config); docs/formats/xplane.md and xla.md say so.
#ifndef HBMSIM_TRACE_CORE_FRAMEWORK_H_
#define HBMSIM_TRACE_CORE_FRAMEWORK_H_

#include <cstdint>
#include <string_view>

namespace hbmsim::trace {

enum class Framework : uint8_t { kUnknown, kTensorFlow, kJax, kXla };

// "tensorflow", "jax", "xla", and "" for kUnknown: what a profile's metadata
// (`# framework:`) and diagnose's --json write.
constexpr std::string_view FrameworkName(Framework f) {
  switch (f) {
    case Framework::kTensorFlow:
      return "tensorflow";
    case Framework::kJax:
      return "jax";
    case Framework::kXla:
      return "xla";
    case Framework::kUnknown:
      return "";
  }
  return "";
}

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_CORE_FRAMEWORK_H_
