// Which of a recorded stack's frames are the user's own code: what a person
// whose job died looks for first (their models.py:181, not the caching
// allocator's malloc). A PyTorch snapshot's stack mixes C++ frames (no line),
// the CPython interpreter, torch's own Python and the standard library; the
// user's frames are the Python source lines outside those.
#ifndef HBMSIM_SIM_REPORT_USER_FRAMES_H_
#define HBMSIM_SIM_REPORT_USER_FRAMES_H_

#include <functional>
#include <string>
#include <vector>

#include "sim/layer.h"
#include "trace/core/context_table.h"
#include "trace/core/reader.h"

namespace hbmsim::sim {

// A Python source line outside the frameworks and the standard library
// (trace/core/python_frames.h).
bool IsUserFrame(const StackFrame& f);
// The user frames of `frames`, in the same order (innermost first).
std::vector<StackFrame> UserFrames(const std::vector<StackFrame>& frames);
// "models.py:181 update_nodes": the file's base name, short enough for a
// table's key.
std::string ShortFrameText(const StackFrame& f);
// "/full/path/models.py:181 in update_nodes".
std::string FrameText(const StackFrame& f);
// The innermost user frame of a reader's current event, as ShortFrameText;
// "" when it has none (or the table is null).
std::string TopUserFrame(const ContextTable* table, uint32_t frames);
// TopUserFrame of each event `events` reads, for MemoryAttribution; nullptr
// when the recording has no stacks (a reader's table is there from the
// start or never), so a replay of a trace without them pays nothing per
// alloc. `events` must outlive it.
std::function<std::string(const Event&)> TopUserFrames(const EventReader& events);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_REPORT_USER_FRAMES_H_
