// The readers of each kind of block (oom_text.h), inside this folder.
#ifndef HBMSIM_TRACE_OOM_TEXT_BLOCKS_H_
#define HBMSIM_TRACE_OOM_TEXT_BLOCKS_H_

#include <optional>
#include <string>
#include <string_view>

#include "trace/oom_text/log_lines.h"
#include "trace/oom_text/oom_text.h"

namespace hbmsim::trace::oom_text {

// Blocks of one kind read from one text at most: a hostile log of a
// million one-line failures stays bounded (memory and the repeat check).
inline constexpr size_t kMaxBlocksPerKind = 256;

// A seen size figure; false when `s` does not start with a size.
bool AddSize(OomText& t, std::string name, std::string_view s);
// A seen percentage or factor ("24.2%", "32.0x") at the start of `s`.
bool AddRatio(OomText& t, std::string name, std::string_view s, std::string unit);
void AddDerived(OomText& t, std::string name, double bytes, double precision, std::string how);

// Sentences found anywhere in the flat text (they may be wrapped). Each
// appends its blocks; `from` is where the search starts.
void ReadTpuAllocations(const LogLines& log, std::vector<OomText>& out);
void ReadAllocatableFailures(const LogLines& log, std::vector<OomText>& out);
void ReadReservations(const LogLines& log, std::vector<OomText>& out);
void ReadCompileTimeReports(const LogLines& log, std::vector<OomText>& out);
void ReadBufferAssignments(const LogLines& log, std::vector<OomText>& out);
void ReadBfcHeaders(const LogLines& log, std::vector<OomText>& out);
void ReadBareRequests(const LogLines& log, std::vector<OomText>& out);
void ReadAllocatorStats(const LogLines& log, std::vector<OomText>& out);

// The HBM usage lines that follow a reservation failure or a compile-time
// report, from line index `first` (0-based) until the next block starts.
void ReadHbmLines(const LogLines& log, size_t first, OomText& t);

// An "Operator:" value (op_name="..." source_file="..." source_line=N, or op_type)
// into the allocation's op and "file.py:N" source.
void ReadOperator(ProgramAllocation& a, std::string_view op);

// True for a line that starts a block of its own.
bool StartsBlock(std::string_view line);

// The verdict, derived figures, would-fit lines and missing parts of `t`, by kind.
void Conclude(OomText& t);

}  // namespace hbmsim::trace::oom_text

#endif  // HBMSIM_TRACE_OOM_TEXT_BLOCKS_H_
