// Everything a BFC dump (and the log lines around it) shows, figure by figure,
// each marked "seen" (printed in the log, quoted as printed) or "derived"
// (computed by hbmsim from seen figures, with how). Most real dumps are
// partial excerpts: this is what `diagnose` can still tell about them.
#ifndef HBMSIM_TRACE_BFC_DUMP_FIGURES_H_
#define HBMSIM_TRACE_BFC_DUMP_FIGURES_H_

#include <optional>
#include <string>
#include <vector>

#include "trace/bfc_dump/dump.h"

namespace hbmsim::trace::bfc_dump {

struct Figure {
  std::string what;   // "request", "largest free chunk seen", "bin 256B", ...
  std::string value;  // "18.00MiB (rounded to 18874368)"
  bool derived = false;
  int line = 0;  // the log line it was seen on (0 for derived figures over many lines)
  // A "Bin (N):" line with no chunk: the text report folds runs of them into
  // one line (most bins of most dumps are empty); the JSON keeps each.
  bool empty_bin = false;
};

// The lines of the log that belong to one dump but are printed apart from it.
struct DumpContext {
  std::optional<DeviceCreated> device;  // the device's "Created ... with N MB memory" line
  std::optional<TensorOom> tensor;      // the OOM line naming the failed tensor
};

// The context of dump `index` of `log`: the last device line before the dump
// (the one of its GPU when both name one), and the first tensor OOM line after
// the dump starts and before the next one (of its allocator when both name one).
DumpContext FindContext(const BfcLog& log, size_t index);

// The tensor's bytes (product of the dimensions times the dtype's size), when
// the shape parses and the dtype is known.
std::optional<uint64_t> TensorBytes(const TensorOom& t);

// Every figure of `dump` and `context`, in report order: request, limit, pool
// and Stats, chunks seen, free chunks listed under "Bin for", bins, summary.
std::vector<Figure> CollectFigures(const BfcDump& dump, const DumpContext& context);

}  // namespace hbmsim::trace::bfc_dump

#endif  // HBMSIM_TRACE_BFC_DUMP_FIGURES_H_
