// One matcher per kind of BFC log line (docs/formats/bfc-dump.md).
// Each takes the message with the logger prefix removed and surrounding spaces
// trimmed, and returns what the line says, or nullopt when it is not that kind.
// Matchers are lenient about what follows the fields they need, because pasted
// lines are often cut ("[...]") or lose trailing spaces.
#ifndef HBMSIM_TRACE_BFC_DUMP_LINE_PARSERS_H_
#define HBMSIM_TRACE_BFC_DUMP_LINE_PARSERS_H_

#include <optional>
#include <string_view>
#include <variant>

#include "trace/bfc_dump/dump.h"

namespace hbmsim::trace::bfc_dump {

// "Allocator (X) ran out of memory trying to allocate ..." in every era: the
// dumping header, or the non-dumping "not a failure" warning.
using OomLine = std::variant<Header, NotAFailureWarning>;
std::optional<OomLine> MatchOomLine(std::string_view msg);

std::optional<BinLine> MatchBinLine(std::string_view msg);
std::optional<BinFor> MatchBinFor(std::string_view msg);
std::optional<ChunkStateLine> MatchChunkState(std::string_view msg);
std::optional<uint64_t> MatchRegionLine(std::string_view msg);  // "Next region of size N"
std::optional<Chunk> MatchChunkLine(std::string_view msg);
std::optional<SummaryLine> MatchSummaryLine(std::string_view msg);
std::optional<HumanBytes> MatchSumTotal(std::string_view msg);
std::optional<PoolLine> MatchPoolLine(std::string_view msg);
std::optional<SubAllocatorFailure> MatchSubAllocatorFailure(std::string_view msg);
std::optional<HeadMemorySummary> MatchHeadMemorySummary(std::string_view msg);

// One line of AllocatorStats::DebugString ("InUse:      589212672"); updates
// `stats` and returns true when it is one.
bool MatchStatsLine(std::string_view msg, Stats& stats);

// RenderOccupancy's line: only '_', '*' and 'x', or "<allocator contains no memory>".
bool IsOccupancyLine(std::string_view msg);

}  // namespace hbmsim::trace::bfc_dump

#endif  // HBMSIM_TRACE_BFC_DUMP_LINE_PARSERS_H_
