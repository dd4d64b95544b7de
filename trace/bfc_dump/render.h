// The `hbmsim diagnose` report for a BFC log: pure functions from the parsed
// log and its diagnoses to text (for people) and JSON (for scripts). Byte
// counts are printed exactly, with TensorFlow's own rounding beside them so a
// user can find the number in the dump they pasted.
#ifndef HBMSIM_TRACE_BFC_DUMP_RENDER_H_
#define HBMSIM_TRACE_BFC_DUMP_RENDER_H_

#include <string>
#include <vector>

#include "trace/bfc_dump/diagnosis.h"
#include "trace/bfc_dump/dump.h"

namespace hbmsim::trace::bfc_dump {

// One Diagnosis per dump of `log`, in log order.
std::vector<Diagnosis> DiagnoseAll(const BfcLog& log);

std::string RenderDiagnoseText(const BfcLog& log, const std::vector<Diagnosis>& diagnoses);

// {"source", "lines", "unmatched_lines", "not_a_failure_warnings", "gc_warnings",
//  "sub_allocator_failures", "dumps": [{"allocator", "lines", "request", "rounded",
//  "verdict", "heap_rebuilt", "pool_bytes", ..., "checks", "free_histogram",
//  "what_if", "missing"}]}; unknown values are null.
std::string RenderDiagnoseJson(const BfcLog& log, const std::vector<Diagnosis>& diagnoses);

}  // namespace hbmsim::trace::bfc_dump

#endif  // HBMSIM_TRACE_BFC_DUMP_RENDER_H_
