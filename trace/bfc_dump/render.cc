#include "trace/bfc_dump/render.h"

#include <optional>

#include "allocator/core/units.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "trace/core/human_bytes.h"
#include "trace/core/json_text.h"
#include "trace/layer.h"

namespace hbmsim::trace::bfc_dump {
namespace {

// "614400000 (585.94MiB)"
std::string ExactAndHuman(uint64_t bytes) {
  return fmt::format("{} ({})", bytes, HumanReadableNumBytes(Bytes(bytes)));
}

std::string OrUnknown(const std::optional<uint64_t>& bytes) {
  return bytes ? ExactAndHuman(*bytes) : "unknown";
}

std::string YesNo(const std::optional<bool>& v) {
  if (!v) return "unknown";
  return *v ? "fits" : "does not fit";
}

std::string RequestLine(const Diagnosis& d) {
  if (d.request_text.empty()) return "unknown (no OOM header, \"Bin for\" line or tensor shape in the log)";
  std::string line = d.request_text;
  if (d.rounded) {
    if (d.request_source == "Bin for") {
      line += fmt::format(", about {} bytes (from the \"Bin for\" line; no OOM header)", *d.rounded);
    } else if (d.request_source == "tensor") {
      line += fmt::format(", {} bytes rounded (the failed tensor's size; no OOM header)", *d.rounded);
    } else {
      line += d.rounded_is_estimate
                  ? fmt::format(", about {} bytes once rounded (the header gives no exact size)", *d.rounded)
                  : fmt::format(", rounded to {} bytes", *d.rounded);
    }
  }
  if (!d.op.empty()) line += fmt::format(", requested by op {}", d.op);
  return line;
}

void RenderHeap(const Diagnosis& d, std::string& out) {
  if (d.heap) {
    const Heap& h = *d.heap;
    out += fmt::format(
        "  heap         rebuilt from {} chunks in {} region(s): pool {}, in use {} in {} chunks, "
        "free {} in {} chunks, largest free chunk {}\n",
        h.chunks, h.regions, ExactAndHuman(h.pool_bytes), ExactAndHuman(h.in_use_bytes), h.in_use_chunks,
        ExactAndHuman(h.free_bytes), h.free_chunks, ExactAndHuman(h.largest_free));
  } else {
    out += fmt::format("  heap         not rebuilt; pool {}, in use {}, free {}\n", OrUnknown(d.pool_bytes),
                       OrUnknown(d.in_use_bytes), OrUnknown(d.free_bytes));
  }
  out += fmt::format("  limit        {}{}, unallocated {}\n", OrUnknown(d.limit),
                     d.limit_from_device ? " at least (the device line's whole MiB)" : "",
                     OrUnknown(d.available));
  for (const Check& c : d.checks) {
    out += fmt::format("  check        {:<12} {}  {}\n", c.name, c.passed ? "ok    " : "FAILED", c.detail);
  }
  if (!d.free_histogram.empty()) out += "  free chunks by bin\n";
  for (const BinCount& b : d.free_histogram) {
    out += fmt::format("    bin {:>9}  {:>5} chunks  {}\n", HumanReadableNumBytes(Bytes(b.bin_size)), b.count,
                       ExactAndHuman(b.bytes));
  }
}

// Only what is known: a what-if with an unknown answer is left out.
void RenderWhatIf(const Diagnosis& d, std::string& out) {
  const WhatIf& w = d.what_if;
  if (!d.rounded) return;
  std::string lines;
  if (w.fits_after_defrag) lines += fmt::format("    defragmented pool     {}\n", YesNo(w.fits_after_defrag));
  if (w.fits_paged) {
    std::string paged = YesNo(w.fits_paged);
    if (w.free_pages_2mib && w.available_pages_2mib) {
      paged += fmt::format(" ({} free + {} unallocated 2 MiB pages, {} needed)", *w.free_pages_2mib,
                           *w.available_pages_2mib, *w.pages_needed);
    }
    lines += fmt::format("    paged pool (2 MiB)    {}\n", paged);
  }
  if (w.more_limit_bytes) {
    lines += fmt::format("    more limit            +{} bytes for a new region", *w.more_limit_bytes);
    if (w.more_limit_bytes_coalescing) {
      lines += fmt::format("; +{} if it coalesces with the free top chunk (TF's VMM allocator)",
                           *w.more_limit_bytes_coalescing);
    }
    lines += "\n";
  }
  if (!lines.empty()) out += "  what if\n" + lines;
}

// The bins with no chunk, on one line where the bin lines end: runs of
// neighbours as "4.0KiB-32.0KiB", the lines they were seen on as a range.
std::string EmptyBinsLine(const std::vector<const Figure*>& empty) {
  const auto size_of = [](const Figure* f) { return f->what.substr(4); };  // "bin 512B" -> "512B"
  std::string runs;
  for (size_t i = 0; i < empty.size();) {
    size_t j = i;
    while (j + 1 < empty.size() && empty[j + 1]->line == empty[j]->line + 1) ++j;
    if (!runs.empty()) runs += ", ";
    runs += i == j ? size_of(empty[i]) : size_of(empty[i]) + "-" + size_of(empty[j]);
    i = j + 1;
  }
  const std::string what = fmt::format("{} empty bins", empty.size());
  return fmt::format("    {:<8} {:<26} {}: 0 chunks  (lines {}-{})\n", "seen", what, runs, empty.front()->line,
                     empty.back()->line);
}

// Every figure the log shows for a partial dump, marked seen or derived (a
// rebuilt heap already says all of it above; the JSON always has them). Empty
// bins (most of a dump's 21) fold into one line, so what is missing stays on
// the first screen.
void RenderFigures(const Diagnosis& d, std::string& out) {
  if (d.figures.empty() || d.heap_rebuilt) return;
  out += "  in the log   (seen: printed there; derived: computed by hbmsim from what was seen)\n";
  std::vector<const Figure*> empty;
  size_t last_bin = 0;  // the bin lines are one run of figures (figures.cc AddBins)
  for (size_t i = 0; i < d.figures.size(); ++i) {
    if (d.figures[i].empty_bin) empty.push_back(&d.figures[i]);
    if (d.figures[i].what.starts_with("bin ")) last_bin = i;
  }
  const bool fold = empty.size() > 1;
  for (size_t i = 0; i < d.figures.size(); ++i) {
    const Figure& f = d.figures[i];
    if (!fold || !f.empty_bin) {
      out += fmt::format("    {:<8} {:<26} {}", f.derived ? "derived" : "seen", f.what, f.value);
      if (f.line > 0) out += fmt::format("  (line {})", f.line);
      out += "\n";
    }
    if (fold && i == last_bin) out += EmptyBinsLine(empty);
  }
}

void RenderOne(const Diagnosis& d, size_t index, std::string& out) {
  out += fmt::format("\ndump {} (lines {}-{}), allocator {}\n", index + 1, d.first_line, d.last_line,
                     d.allocator.empty() ? "unknown" : d.allocator);
  out += fmt::format("  request      {}\n", RequestLine(d));
  out += fmt::format("  verdict      {}: {}\n", VerdictName(d.verdict), d.verdict_basis);
  RenderHeap(d, out);
  RenderWhatIf(d, out);
  RenderFigures(d, out);
  for (const std::string& m : d.missing) out += fmt::format("  missing      {}\n", m);
}

nlohmann::json Nullable(const std::optional<uint64_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}
nlohmann::json Nullable(const std::optional<bool>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

nlohmann::json WhatIfJson(const WhatIf& w) {
  return {{"fits_after_defrag", Nullable(w.fits_after_defrag)},
          {"fits_paged", Nullable(w.fits_paged)},
          {"free_pages_2mib", Nullable(w.free_pages_2mib)},
          {"available_pages_2mib", Nullable(w.available_pages_2mib)},
          {"pages_needed", Nullable(w.pages_needed)},
          {"more_limit_bytes", Nullable(w.more_limit_bytes)},
          {"more_limit_bytes_coalescing", Nullable(w.more_limit_bytes_coalescing)}};
}

nlohmann::json DiagnosisJson(const Diagnosis& d) {
  nlohmann::json checks = nlohmann::json::array(), histogram = nlohmann::json::array();
  for (const Check& c : d.checks)
    checks.push_back({{"name", c.name}, {"passed", c.passed}, {"detail", c.detail}});
  for (const BinCount& b : d.free_histogram) {
    histogram.push_back({{"bin_size", b.bin_size}, {"count", b.count}, {"bytes", b.bytes}});
  }
  nlohmann::json figures = nlohmann::json::array();
  for (const Figure& f : d.figures) {
    figures.push_back({{"what", f.what},
                       {"value", f.value},
                       {"kind", f.derived ? "derived" : "seen"},
                       {"line", f.line > 0 ? nlohmann::json(f.line) : nlohmann::json()}});
  }
  return {{"allocator", d.allocator},
          {"first_line", d.first_line},
          {"last_line", d.last_line},
          {"request", d.request_text},
          {"rounded", Nullable(d.rounded)},
          {"rounded_is_estimate", d.rounded_is_estimate},
          {"request_source", d.request_source},
          {"op", d.op},
          {"verdict", VerdictName(d.verdict)},
          {"verdict_basis", d.verdict_basis},
          {"heap_rebuilt", d.heap_rebuilt},
          {"chunks", d.heap ? nlohmann::json(d.heap->chunks) : nlohmann::json()},
          {"pool_bytes", Nullable(d.pool_bytes)},
          {"in_use_bytes", Nullable(d.in_use_bytes)},
          {"free_bytes", Nullable(d.free_bytes)},
          {"largest_free_chunk", Nullable(d.largest_free)},
          {"memory_limit", Nullable(d.limit)},
          {"memory_limit_from_device_line", d.limit_from_device},
          {"available_bytes", Nullable(d.available)},
          {"approximate", d.approximate},
          {"checks", checks},
          {"free_histogram", histogram},
          {"what_if", WhatIfJson(d.what_if)},
          {"missing", d.missing},
          {"figures", figures}};
}

}  // namespace

std::vector<Diagnosis> DiagnoseAll(const BfcLog& log) {
  std::vector<Diagnosis> out;
  out.reserve(log.dumps.size());
  for (size_t i = 0; i < log.dumps.size(); ++i) out.push_back(Diagnose(log.dumps[i], FindContext(log, i)));
  return out;
}

std::string RenderDiagnoseText(const BfcLog& log, const std::vector<Diagnosis>& diagnoses) {
  std::string out = fmt::format("{}: {} BFC dump(s) in {} lines ({} not part of a dump", log.source,
                                diagnoses.size(), log.lines, log.unmatched_lines);
  if (!log.not_a_failure.empty()) {
    out += fmt::format(", {} \"not a failure\" warning(s)", log.not_a_failure.size());
  }
  if (log.gc_warnings > 0) out += fmt::format(", {} garbage-collection warning(s)", log.gc_warnings);
  if (!log.sub_allocator_failures.empty()) {
    out += fmt::format(", {} failed device allocation(s)", log.sub_allocator_failures.size());
  }
  out += ")\n";
  for (size_t i = 0; i < diagnoses.size(); ++i) RenderOne(diagnoses[i], i, out);
  return out;
}

std::string RenderDiagnoseJson(const BfcLog& log, const std::vector<Diagnosis>& diagnoses) {
  nlohmann::json dumps = nlohmann::json::array();
  for (const Diagnosis& d : diagnoses) dumps.push_back(DiagnosisJson(d));
  nlohmann::json sub = nlohmann::json::array();
  for (const SubAllocatorFailure& f : log.sub_allocator_failures) {
    sub.push_back({{"line", f.line}, {"bytes", f.bytes}});
  }
  const nlohmann::json root = {{"source", log.source},
                               {"lines", log.lines},
                               {"unmatched_lines", log.unmatched_lines},
                               {"not_a_failure_warnings", log.not_a_failure.size()},
                               {"gc_warnings", log.gc_warnings},
                               {"sub_allocator_failures", sub},
                               {"dumps", dumps}};
  // Names and ops are copied from the log, which may hold any bytes: invalid
  // UTF-8 becomes U+FFFD instead of nlohmann's type_error (an exit 3).
  return JsonText(root, 2) + "\n";
}

}  // namespace hbmsim::trace::bfc_dump
