// Reads a TensorFlow / JAX log (or a pasted excerpt of one) and collects every
// BFC allocator OOM dump in it, of every era docs/formats/bfc-dump.md lists.
// Lines that are no part of a dump are counted, never fatal; '#' lines and
// "[...]" cut marks (as in the real logs the tests use) are understood.
//
// Where one dump ends and the next begins: a dumping OOM header, a second
// "BFCAllocator dump for" title, a line of an earlier part of the dump than the
// part already seen (bins after chunks, a bin size that does not increase), the
// occupancy line (it ends a dump), or a timestamp more than a second earlier
// than the previous one (another log pasted below).
#ifndef HBMSIM_TRACE_BFC_DUMP_PARSER_H_
#define HBMSIM_TRACE_BFC_DUMP_PARSER_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "trace/bfc_dump/dump.h"

namespace hbmsim::trace::bfc_dump {

// Every dump in `text`. InvalidArgument "<source>: no BFC allocator dump found
// (...)" when there is none: the caller was given the wrong file.
absl::StatusOr<BfcLog> ParseBfcLog(std::string_view text, std::string_view source);

// ParseBfcLog on a file's contents; NotFound "<path>: cannot read" when it cannot be read.
absl::StatusOr<BfcLog> ReadBfcLogFile(const std::string& path);

}  // namespace hbmsim::trace::bfc_dump

#endif  // HBMSIM_TRACE_BFC_DUMP_PARSER_H_
