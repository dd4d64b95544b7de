// The one-pass parse of the lines nearly every trace is made of:
//
//   alloc <id> <bytes> [t=N] [stream=N] [device=N] [tag=T] [shape=S]
//   free <id> [t=N] [stream=N] [device=N]          (or `a`, `f`)
//
// with single spaces, plain decimals and each attribute at most once. It
// reads the line a word (eight bytes) at a time: a byte loop's exit is a
// mispredicted branch per field, and on such short fields those branches
// cost more than the work (issue 20: text with attributes at the speed of
// .hbt). Anything else returns false and ParseEventLine parses the line
// field by field, owning every message; on true `e` is exactly what that
// slower path would have produced (tests/trace/text/event_parser_test.cc checks
// both paths against each other for every number length and position).
#ifndef HBMSIM_TRACE_TEXT_COMMON_LINE_H_
#define HBMSIM_TRACE_TEXT_COMMON_LINE_H_

#include <string_view>

#include "trace/core/event.h"

namespace hbmsim::trace {

// `e`'s tag views into `line`. A line holding a NUL byte is never taken.
bool ParseCommonLine(std::string_view line, Event& e);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TEXT_COMMON_LINE_H_
