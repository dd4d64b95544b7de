// The lines the TPU runtime and XLA:TPU print after a reservation failure
// or a compile-time OOM: the HBM capacity block, the total usage, the heap's
// status, the persistent allocations, the program's requirement and its
// largest allocations. A line is read by its first words; which list it
// belongs to ("reserved" is both a usage and a requirement line) follows
// from the heading above it.
#include "trace/oom_text/blocks.h"

namespace hbmsim::trace::oom_text {
namespace {

enum class Section { kNone, kCapacity, kUsage, kHeap, kPersistent, kRequirement, kAllocations };

// `line` starts with `word` followed by spaces (or ":"): the rest, trimmed.
std::optional<std::string_view> Led(std::string_view line, std::string_view word) {
  if (!line.starts_with(word)) return std::nullopt;
  std::string_view rest = line.substr(word.size());
  if (!rest.empty() && rest.front() != ' ' && rest.front() != ':') return std::nullopt;
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == ':')) rest.remove_prefix(1);
  return rest;
}

// "24.2% utilization", "(97.4% utilization: Unpadded (3.81G) Padded (3.92G), 0.4% fragmentation (14.68M))".
void ReadHloTemp(OomText& t, std::string_view rest) {
  if (!AddSize(t, "hlo_temp", rest)) return;
  if (auto open = After(rest, "(")) AddRatio(t, "hlo_temp_utilization", *open, "%");
  if (auto unpadded = After(rest, "Unpadded (")) AddSize(t, "hlo_temp_unpadded", *unpadded);
  if (auto padded = After(rest, " Padded (")) AddSize(t, "hlo_temp_padded", *padded);
  const size_t frag = rest.find("% fragmentation");
  if (frag != std::string_view::npos) {
    size_t start = frag;
    while (start > 0 && ((rest[start - 1] >= '0' && rest[start - 1] <= '9') || rest[start - 1] == '.'))
      --start;
    AddRatio(t, "hlo_temp_fragmentation", rest.substr(start), "%");
    if (auto bytes = After(rest.substr(frag), "fragmentation ("))
      AddSize(t, "hlo_temp_fragmentation_bytes", *bytes);
  }
}

// One line of "Largest program allocations in hbm:".
void ReadAllocationLine(OomText& t, std::string_view line) {
  std::string_view rest = line;
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
  if (digits > 0 && rest.substr(digits).starts_with(". Size:")) {
    ProgramAllocation a;
    a.index = std::atoi(std::string(rest.substr(0, digits)).c_str());
    OomText scratch;
    if (AddSize(scratch, "size", *After(rest, "Size:"))) a.size = scratch.figures.back();
    t.allocations.push_back(std::move(a));
    return;
  }
  if (t.allocations.empty()) return;
  ProgramAllocation& a = t.allocations.back();
  OomText scratch;
  if (auto v = Led(line, "Operator")) {
    ReadOperator(a, *v);
  } else if (auto v = Led(line, "Shape")) {
    a.shape = std::string(*v);
  } else if (auto v = Led(line, "Unpadded size")) {
    if (AddSize(scratch, "unpadded", *v)) a.unpadded = scratch.figures.back();
  } else if (auto v = Led(line, "Extra memory due to padding")) {
    if (AddSize(scratch, "padding", *v)) a.padding = scratch.figures.back();
    if (auto x = After(*v, "(")) a.expansion = std::string(x->substr(0, x->find(' ')));
  } else if (auto v = Led(line, "XLA label")) {
    a.label = std::string(*v);
  } else if (auto v = Led(line, "Allocation type")) {
    a.type = std::string(*v);
  }
}

bool ReadUsageLine(OomText& t, Section section, std::string_view line) {
  if (section == Section::kCapacity) {
    for (auto [word, name] : {std::pair{"Top-of-Memory reserved", "top_of_memory_reserved"},
                              {"Currently allocated", "currently_allocated"},
                              {"Program requirement", "program_requirement_at_reservation"},
                              {"Available after request", "available_after_request"}}) {
      if (auto v = Led(line, word)) return AddSize(t, name, *v);
    }
  }
  if (section == Section::kUsage) {
    if (line.starts_with("reserved"))
      return AddSize(t, "usage_reserved", line.substr(line.rfind(' ', line.size() - 2) + 1));
    if (auto v = Led(line, "heap allocations (without fragmentation)"))
      return AddSize(t, "heap_allocations", *v);
    if (auto v = Led(line, "program")) return AddSize(t, "usage_program", *v);
    if (auto v = Led(line, "arguments")) {
      if (!AddSize(t, "usage_arguments", *v)) t.missing.push_back("the arguments' size (\"unknown size\")");
      return true;
    }
  }
  if (section == Section::kHeap) {
    if (auto v = Led(line, "Max free chunk")) {
      AddSize(t, "max_free_chunk", *v);
      if (auto p = After(*v, "(")) AddRatio(t, "heap_fragmentation", *p, "%");
      return true;
    }
  }
  if (section == Section::kPersistent) {
    for (auto [word, name] :
         {std::pair{"arguments", "persistent_arguments"}, {"output", "persistent_output"}}) {
      if (auto v = Led(line, word)) return AddSize(t, name, *v);
    }
  }
  if (section == Section::kRequirement) {
    for (auto [word, name] : {std::pair{"reserved", "requirement_reserved"},
                              {"global", "requirement_global"},
                              {"scoped", "requirement_scoped"}}) {
      if (auto v = Led(line, word)) return AddSize(t, name, *v);
    }
    if (auto v = Led(line, "HLO temp")) {
      ReadHloTemp(t, *v);
      return true;
    }
  }
  return false;
}

// A heading line: the section it opens (and its own figure).
std::optional<Section> ReadHeading(OomText& t, std::string_view line) {
  if (auto v = Led(line, "HBM capacity")) {
    AddSize(t, "hbm_capacity", *v);
    return Section::kCapacity;
  }
  if (auto v = Led(line, "Total hbm usage >=")) {
    AddSize(t, "total_usage", *v);
    return Section::kUsage;
  }
  if (line.starts_with("Heap allocator status")) return Section::kHeap;
  if (line.starts_with("Persistent allocations")) return Section::kPersistent;
  if (auto v = Led(line, "Program hbm requirement")) {
    AddSize(t, "program_requirement", *v);
    return Section::kRequirement;
  }
  if (line.starts_with("Largest program allocations")) return Section::kAllocations;
  if (auto v = Led(line, "Output size")) {
    if (!AddSize(t, "output_size", *v)) t.missing.push_back("the output size (\"unknown\")");
    if (auto shares = After(*v, "shares ")) AddSize(t, "output_shared_with_arguments", *shares);
    return Section::kNone;
  }
  return std::nullopt;
}

}  // namespace

bool StartsBlock(std::string_view line) {
  for (std::string_view anchor :
       {"Attempting to allocate", "Attempting to reserve", "Ran out of memory in memory space",
        "BufferAssignment OOM Debugging", "Out of memory while trying", "Could not allocate",
        "ran out of memory trying to allocate"}) {
    if (line.find(anchor) != std::string_view::npos) return true;
  }
  return false;
}

void ReadHbmLines(const LogLines& log, size_t first, OomText& t) {
  Section section = Section::kNone;
  for (size_t i = first; i < log.lines.size(); ++i) {
    const std::string_view line = log.lines[i];
    if (StartsBlock(line)) break;
    if (std::optional<Section> heading = ReadHeading(t, line)) {
      section = *heading;
      continue;
    }
    if (section == Section::kAllocations) {
      ReadAllocationLine(t, line);
      continue;
    }
    ReadUsageLine(t, section, line);
  }
}

}  // namespace hbmsim::trace::oom_text
