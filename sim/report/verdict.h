// The top of `hbmsim replay`'s text report, the answer first: the verdict
// paragraph (what failed, oom or fragmentation, by how much, on which device,
// after which mark of the program) and the failing request as the user's
// code made it (its tag, shape and the recorded stack's user frames).
//
// `--quiet` prints VerdictText alone; the full report (text_report.cc) puts
// these two first, then where the memory was, the advice and the details.
#ifndef HBMSIM_SIM_REPORT_VERDICT_H_
#define HBMSIM_SIM_REPORT_VERDICT_H_

#include <string>

#include "sim/report/replay_report.h"

namespace hbmsim::sim {

// At most this many user frames of the failing request are listed.
inline constexpr size_t kMaxListedFrames = 8;

// The verdict paragraph, ending in a newline: always present.
std::string VerdictText(const ReplayReportInput& in);
// "Failing request ..." with its labels and user frames; "" when nothing failed.
std::string FailingRequestText(const ReplayReportInput& in);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_REPORT_VERDICT_H_
