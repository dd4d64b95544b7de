// Why a BFC allocation failed, from its dump alone (pure computation):
//
//   free       = pool - in use            (free chunks inside the pool)
//   available  = memory_limit - pool      (limit not yet taken from the device)
//   verdict    oom            if rounded > free + available
//              fragmentation  otherwise, when the largest free chunk < rounded
//              unexplained    a free chunk was big enough (should not happen)
//
// and the what-ifs a user asks next:
//   defragmented  free >= rounded: compacting the pool would have saved it;
//   paged         a cuda_malloc_async-like pool maps 2 MiB pages anywhere, so it
//                 needs ceil(rounded / 2 MiB) pages among the whole free pages
//                 inside free chunks plus the pages of `available`;
//   more limit    bytes of memory_limit to add so that Extend can create a
//                 region of `rounded` bytes (XLA/JAX's cudaMalloc sub-allocator),
//                 and the smaller figure when the new memory coalesces with a
//                 free chunk at the top of the last region (TF's VMM sub-allocator).
//
// With a complete chunk list everything is exact. Otherwise what the pool line,
// Stats and header allow is reported and `missing` says what is not known.
#ifndef HBMSIM_TRACE_BFC_DUMP_DIAGNOSIS_H_
#define HBMSIM_TRACE_BFC_DUMP_DIAGNOSIS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/bfc_dump/dump.h"
#include "trace/bfc_dump/figures.h"
#include "trace/bfc_dump/heap.h"

namespace hbmsim::trace::bfc_dump {

enum class Verdict { kOom, kFragmentation, kUnexplained, kUnknown };
std::string_view VerdictName(Verdict v);  // "oom", "fragmentation", "unexplained", "unknown"

struct WhatIf {
  std::optional<bool> fits_after_defrag;
  std::optional<uint64_t> free_pages_2mib;
  std::optional<uint64_t> available_pages_2mib;
  std::optional<uint64_t> pages_needed;
  std::optional<bool> fits_paged;
  std::optional<uint64_t> more_limit_bytes;
  std::optional<uint64_t> more_limit_bytes_coalescing;
};

struct Diagnosis {
  std::string allocator;
  int first_line = 0;
  int last_line = 0;
  std::string request_text;          // as printed ("585.94MiB"); empty when nothing shows it
  std::optional<uint64_t> rounded;   // the rounded request
  bool rounded_is_estimate = false;  // rounded up from the printed text (TF 1.x headers)
  // Where the request came from without a header: the first "Bin for" line
  // (DumpMemoryLog prints the rounded request there), else the tensor OOM line.
  std::string request_source;  // "header", "Bin for", "tensor"; empty when unknown
  std::string op;
  bool heap_rebuilt = false;
  std::optional<Heap> heap;              // when heap_rebuilt
  std::vector<Check> checks;             // when heap_rebuilt
  std::vector<BinCount> free_histogram;  // when heap_rebuilt
  std::optional<uint64_t> pool_bytes;
  std::optional<uint64_t> in_use_bytes;
  std::optional<uint64_t> free_bytes;
  std::optional<uint64_t> largest_free;
  std::optional<uint64_t> available;
  std::optional<uint64_t> limit;
  bool limit_from_device = false;  // "with N MB memory": N MiB, a lower bound
  bool approximate = false;        // the totals above come from human-readable values
  Verdict verdict = Verdict::kUnknown;
  std::string verdict_basis;  // one sentence: the numbers the verdict rests on
  WhatIf what_if;
  std::vector<std::string> missing;  // what the dump does not show
  std::vector<Figure> figures;       // everything it does show, seen or derived
};

Diagnosis Diagnose(const BfcDump& dump, const DumpContext& context = {});

}  // namespace hbmsim::trace::bfc_dump

#endif  // HBMSIM_TRACE_BFC_DUMP_DIAGNOSIS_H_
