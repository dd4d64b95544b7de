// XLA's "BufferAssignment OOM Debugging" (the runtime could not allocate a
// compiled program's buffers: its stats and the buffers live at its peak)
// and the allocator's "AllocatorStats" block.
#include "trace/oom_text/blocks.h"

namespace hbmsim::trace::oom_text {
// "op_name=\"jit(f)/mul\" source_file=\"/x/models.py\" source_line=689" -> the op and "models.py:689".
void ReadOperator(ProgramAllocation& a, std::string_view op) {
  auto quoted = [&](std::string_view key) -> std::string {
    const size_t at = op.find(key);
    if (at == std::string_view::npos) return "";
    const std::string_view rest = op.substr(at + key.size());
    return std::string(rest.substr(0, rest.find('"')));
  };
  a.op = quoted("op_name=\"");
  if (a.op.empty()) a.op = quoted("op_type=\"");
  if (a.op.empty()) a.op = std::string(op);
  std::string file = quoted("source_file=\"");
  if (const size_t slash = file.rfind('/'); slash != std::string::npos) file = file.substr(slash + 1);
  const size_t line_at = op.find("source_line=");
  if (!file.empty()) {
    a.source = file;
    if (line_at != std::string_view::npos) {
      std::string_view n = op.substr(line_at + 12);
      a.source += ":" + std::string(n.substr(0, n.find_first_not_of("0123456789")));
    }
  }
}

namespace {

// One line of a "Buffer N:" entry.
void ReadBufferLine(OomText& t, std::string_view line) {
  if (line.starts_with("Buffer ")) {
    ProgramAllocation a;
    a.index = std::atoi(std::string(line.substr(7)).c_str());
    t.allocations.push_back(std::move(a));
    return;
  }
  if (t.allocations.empty()) return;
  ProgramAllocation& a = t.allocations.back();
  OomText scratch;
  if (auto v = After(line, "Size:"); v && line.starts_with("Size:")) {
    if (AddSize(scratch, "size", *v)) a.size = scratch.figures.back();
  } else if (line.starts_with("Operator:")) {
    ReadOperator(a, *After(line, "Operator:"));
  } else if (line.starts_with("XLA Label:")) {
    a.label = std::string(*After(line, "XLA Label:"));
  } else if (line.starts_with("Shape:")) {
    a.shape = std::string(*After(line, "Shape:"));
  } else if (line.starts_with("Entry Parameter Subshape:")) {
    a.shape = std::string(*After(line, "Entry Parameter Subshape:"));
    a.type = "entry parameter";
  }
}

void ReadStatsLine(OomText& t, std::string_view line) {
  for (auto [word, name] : {std::pair{"parameter allocation:", "parameter_allocation"},
                            {"constant allocation:", "constant_allocation"},
                            {"maybe_live_out allocation:", "maybe_live_out_allocation"},
                            {"preallocated temp allocation:", "preallocated_temp_allocation"},
                            {"preallocated temp fragmentation:", "preallocated_temp_fragmentation"},
                            {"total allocation:", "total_allocation"},
                            {"total fragmentation:", "total_fragmentation"}}) {
    if (auto v = After(line, word); v && line.starts_with(word)) {
      AddSize(t, name, *v);
      return;
    }
  }
}

}  // namespace

void ReadBufferAssignments(const LogLines& log, std::vector<OomText>& out) {
  size_t blocks = 0;
  for (size_t i = 0; i < log.lines.size() && blocks < kMaxBlocksPerKind; ++i) {
    if (log.lines[i].find("BufferAssignment OOM Debugging") == std::string::npos) continue;
    ++blocks;
    OomText t;
    t.kind = "buffer-assignment";
    t.line = i + 1;
    // The request is on the line before ("Out of memory while trying to allocate N bytes.").
    const size_t from = i > 0 ? log.starts[i - 1] : 0;
    const size_t at = log.flat.find("trying to allocate ", from);
    if (at != std::string::npos && at < log.starts[i]) {
      AddSize(t, "requested", std::string_view(log.flat).substr(at + 19));
      t.line = i;
    } else {
      t.missing.push_back("the failing request (\"Out of memory while trying to allocate N bytes.\")");
    }
    for (size_t j = i + 1; j < log.lines.size() && !StartsBlock(log.lines[j]); ++j) {
      const std::string_view line = log.lines[j];
      if (line.starts_with("Buffer ") || !t.allocations.empty()) {
        ReadBufferLine(t, line);
      } else {
        ReadStatsLine(t, line);
      }
    }
    Conclude(t);
    out.push_back(std::move(t));
  }
}

void ReadAllocatorStats(const LogLines& log, std::vector<OomText>& out) {
  size_t blocks = 0;
  for (size_t i = 0; i < log.lines.size() && blocks < kMaxBlocksPerKind; ++i) {
    if (log.lines[i] != "AllocatorStats") continue;
    ++blocks;
    OomText t;
    t.kind = "allocator-stats";
    t.line = i + 1;
    for (size_t j = i + 1; j < log.lines.size() && j < i + 24 && !StartsBlock(log.lines[j]); ++j) {
      const std::string_view line = log.lines[j];
      for (auto [word, name] : {std::pair{"In Use:", "in_use"},
                                {"Peak In Use:", "peak_in_use"},
                                {"Largest Alloc Size:", "largest_alloc"},
                                {"Limit:", "limit"},
                                {"Reserved:", "reserved"},
                                {"Peak Reserved:", "peak_reserved"},
                                {"Reservable Limit:", "reservable_limit"},
                                {"Largest Free Block:", "largest_free"}}) {
        if (line.starts_with(word)) AddSize(t, name, *After(line, word));
      }
      if (auto n = After(line, "Num Allocs:"); n && line.starts_with("Num Allocs:")) {
        t.figures.push_back(Figure{"allocations", std::strtod(std::string(*n).c_str(), nullptr), "", 0, false,
                                   std::string(*n)});
      }
    }
    Conclude(t);
    out.push_back(std::move(t));
  }
}

}  // namespace hbmsim::trace::oom_text
