#include "trace/bfc_dump/diagnosis.h"

#include "allocator/core/units.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "trace/layer.h"

namespace hbmsim::trace::bfc_dump {
namespace {

void DescribeRequest(const BfcDump& dump, const DumpContext& context, Diagnosis& d) {
  if (dump.header) {
    d.request_source = "header";
    d.request_text = dump.header->request.text;
    d.op = dump.header->op;
    if (dump.header->rounded) {
      d.rounded = *dump.header->rounded;
    } else {
      // TF 1.x prints only the rounded-off text; BFC rounds requests to 256 bytes.
      d.rounded = Bytes(dump.header->request.approx_bytes).RoundUp(256).value();
      d.rounded_is_estimate = true;
    }
    return;
  }
  if (!dump.bin_for.empty()) {
    // DumpMemoryLog(rounded_bytes) prints "Bin for <rounded>" first.
    d.request_source = "Bin for";
    d.request_text = dump.bin_for.front().rounded.text;
    d.rounded = Bytes(dump.bin_for.front().rounded.approx_bytes).RoundUp(256).value();
    d.rounded_is_estimate = true;
    d.missing.push_back("the OOM header (the request is read from the \"Bin for\" line, to 3 digits)");
    return;
  }
  if (context.tensor) {
    if (std::optional<uint64_t> bytes = TensorBytes(*context.tensor)) {
      d.request_source = "tensor";
      d.request_text = fmt::format("shape{} {}", context.tensor->shape, context.tensor->dtype);
      d.rounded = Bytes(*bytes).RoundUp(256).value();
      d.rounded_is_estimate = true;
      d.missing.push_back("the OOM header (the request is the failed tensor's size)");
      return;
    }
  }
  d.missing.push_back("the OOM header, so the failed request is unknown");
}

void ListMissingParts(const BfcDump& dump, Diagnosis& d) {
  if (dump.bins.size() < static_cast<size_t>(kNumBins)) {
    d.missing.push_back(fmt::format("bin lines ({} of {} shown)", dump.bins.size(), kNumBins));
  }
  if (!dump.pool && !dump.head_memory) d.missing.push_back("the pool line (pool size, memory limit)");
  if (dump.stats.lines == 0) d.missing.push_back("the Stats block");
}

void UseRebuiltHeap(const BfcDump& dump, Diagnosis& d) {
  const Heap heap = RebuildHeap(dump);
  d.heap_rebuilt = true;
  d.checks = CheckConsistency(dump, heap);
  d.free_histogram = FreeChunkHistogram(dump);
  d.pool_bytes = heap.pool_bytes;
  d.in_use_bytes = heap.in_use_bytes;
  d.free_bytes = heap.free_bytes;
  d.largest_free = heap.largest_free;
  d.heap = heap;
}

void UseTotals(const BfcDump& dump, Diagnosis& d) {
  if (dump.pool) d.pool_bytes = dump.pool->pool_bytes;
  if (dump.stats.in_use && !dump.stats.human_readable) d.in_use_bytes = *dump.stats.in_use;
  if (d.pool_bytes && d.in_use_bytes && *d.pool_bytes >= *d.in_use_bytes) {
    d.free_bytes = *d.pool_bytes - *d.in_use_bytes;
  }
}

// HEAD prints its totals rounded by HumanReadableNumBytes instead of a pool
// line; use them when nothing exact is known.
void UseHeadSummary(const BfcDump& dump, Diagnosis& d) {
  if (!dump.head_memory || d.heap_rebuilt || d.free_bytes) return;
  const HeadMemorySummary& m = *dump.head_memory;
  d.pool_bytes = m.pool.approx_bytes;
  d.free_bytes = m.free.approx_bytes;
  d.largest_free = m.largest_free.approx_bytes;
  d.available = m.unallocated.approx_bytes;
  d.limit = m.limit.approx_bytes;
  d.approximate = true;
}

void FindLimit(const BfcDump& dump, const DumpContext& context, Diagnosis& d) {
  if (dump.pool) {
    d.limit = dump.pool->memory_limit;
    d.available = dump.pool->available;
    return;
  }
  if (dump.stats.limit && !dump.stats.human_readable) {
    d.limit = *dump.stats.limit;
  } else if (context.device && !d.limit) {
    // "with N MB memory" is memory_limit >> 20: the limit is N MiB or up to 1 MiB more.
    d.limit = context.device->mib << 20;
    d.limit_from_device = true;
  }
  if (d.limit && d.pool_bytes && *d.pool_bytes <= *d.limit && !d.available) {
    d.available = *d.limit - *d.pool_bytes;
  }
}

void Judge(Diagnosis& d) {
  if (!d.rounded || !d.free_bytes || !d.available) {
    std::vector<std::string_view> unknown;
    if (!d.rounded) unknown.push_back("the request");
    if (!d.free_bytes) unknown.push_back("the free bytes in the pool");
    if (!d.available) unknown.push_back("the unallocated limit");
    d.verdict_basis = fmt::format("the dump does not show {}", fmt::join(unknown, ", "));
    return;
  }
  const uint64_t rounded = *d.rounded;
  const Bytes room = Bytes(*d.free_bytes) + Bytes(*d.available);
  if (rounded > room.value()) {
    d.verdict = Verdict::kOom;
    d.verdict_basis =
        fmt::format("rounded request {} > free {} + unallocated {}", rounded, *d.free_bytes, *d.available);
  } else if (!d.largest_free || *d.largest_free < rounded) {
    d.verdict = Verdict::kFragmentation;
    d.verdict_basis = d.largest_free
                          ? fmt::format(
                                "rounded request {} <= free {} + unallocated {}, but the largest free "
                                "chunk is {}",
                                rounded, *d.free_bytes, *d.available, *d.largest_free)
                          : fmt::format(
                                "rounded request {} <= free {} + unallocated {}, so no free chunk was "
                                "large enough",
                                rounded, *d.free_bytes, *d.available);
  } else {
    d.verdict = Verdict::kUnexplained;
    d.verdict_basis =
        fmt::format("a free chunk of {} bytes could hold the rounded request {}", *d.largest_free, rounded);
  }
}

void AskWhatIf(const BfcDump& dump, Diagnosis& d) {
  if (!d.rounded) return;
  const uint64_t rounded = *d.rounded;
  WhatIf& w = d.what_if;
  if (d.free_bytes) w.fits_after_defrag = *d.free_bytes >= rounded;
  w.pages_needed = Bytes(rounded).RoundUp(kPage).value() / kPage;
  if (d.available) {
    w.available_pages_2mib = *d.available / kPage;
    w.more_limit_bytes = rounded > *d.available ? rounded - *d.available : 0;
  }
  if (d.heap) {
    w.free_pages_2mib = d.heap->free_pages_2mib;
    if (w.available_pages_2mib) {
      w.fits_paged = *w.free_pages_2mib + *w.available_pages_2mib >= *w.pages_needed;
    }
  } else if (d.free_bytes && w.available_pages_2mib &&
             *d.free_bytes / kPage + *w.available_pages_2mib < *w.pages_needed) {
    w.fits_paged = false;  // even if every free byte formed whole pages
  }
  if (d.heap) {
    if (d.available) {
      const Bytes tail = Bytes(d.heap->tail_free) + Bytes(*d.available);
      w.more_limit_bytes_coalescing = Bytes(rounded).SaturatingSub(tail).value();
    }
  }
}

}  // namespace

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kOom:
      return "oom";
    case Verdict::kFragmentation:
      return "fragmentation";
    case Verdict::kUnexplained:
      return "unexplained";
    case Verdict::kUnknown:
      return "unknown";
  }
  return "unknown";
}

Diagnosis Diagnose(const BfcDump& dump, const DumpContext& context) {
  Diagnosis d;
  d.allocator = dump.allocator;
  d.first_line = dump.first_line;
  d.last_line = dump.last_line;
  DescribeRequest(dump, context, d);
  const std::vector<std::string> gaps = ChunkListGaps(dump);
  if (gaps.empty()) {
    UseRebuiltHeap(dump, d);
  } else {
    for (const std::string& gap : gaps) d.missing.push_back(fmt::format("a complete chunk list: {}", gap));
    UseTotals(dump, d);
  }
  ListMissingParts(dump, d);
  FindLimit(dump, context, d);
  UseHeadSummary(dump, d);
  Judge(d);
  if (d.approximate) d.verdict_basis += " (rounded values of the allocator memory summary)";
  if (d.limit_from_device && d.verdict != Verdict::kUnknown) {
    d.verdict_basis += " (the limit from the device line, whole MiB)";
  }
  AskWhatIf(dump, d);
  d.figures = CollectFigures(dump, context);
  return d;
}

}  // namespace hbmsim::trace::bfc_dump
