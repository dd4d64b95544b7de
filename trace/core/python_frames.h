// Which frames of a recorded Python stack are the user's own code: what a
// person whose job died looks for first (their train.py:42, not the
// framework's dispatch). Shared by every format that records stacks (PyTorch
// snapshots, JAX device memory profiles) and every report that shows them.
#ifndef HBMSIM_TRACE_CORE_PYTHON_FRAMES_H_
#define HBMSIM_TRACE_CORE_PYTHON_FRAMES_H_

#include "trace/core/context_table.h"

namespace hbmsim::trace {

// A Python source line (`.py`, line > 0) in neither the frameworks' own
// Python (torch, jax, jaxlib, wherever installed) nor the interpreter's
// standard library (`.../lib/pythonX.Y/x.py`, outside site-packages /
// dist-packages).
bool IsUserPythonFrame(const StackFrame& f);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_CORE_PYTHON_FRAMES_H_
