#include "trace/oom_text/render.h"

#include <cmath>
#include <iterator>

#include "fmt/format.h"

namespace hbmsim::trace::oom_text {
namespace {

using Out = std::back_insert_iterator<std::string>;

std::string_view Title(std::string_view kind) {
  if (kind == "tpu-allocation") return "the TPU runtime could not allocate a buffer";
  if (kind == "tpu-allocatable")
    return "the TPU runtime could not allocate a buffer (allocatable / available)";
  if (kind == "buffer-assignment")
    return "XLA BufferAssignment OOM: the runtime could not allocate a program's buffers";
  if (kind == "program-reservation") return "the TPU runtime could not reserve a program's memory";
  if (kind == "compile-time") return "XLA:TPU compile-time out of memory: the program does not fit";
  if (kind == "allocation-request") return "the runtime could not allocate a buffer (the request alone)";
  if (kind == "bfc-header") return "a BFC allocator ran out of memory (its header, no chunk listing)";
  return "allocator statistics";
}

std::string Value(const Figure& f) {
  if (f.unit == "B") {
    return f.precision > 0 ? fmt::format("{:.0f} B ±{:.0f}", f.value, f.precision)
                           : fmt::format("{:.0f} B", f.value);
  }
  if (f.unit.empty()) return f.value == 0 ? "" : fmt::format("{:g}", f.value);
  return fmt::format("{:g}{}", f.value, f.unit);
}

void WriteFigures(Out out, const OomText& t) {
  fmt::format_to(out, "  figures (seen: as the text prints it; derived: how):\n");
  for (const Figure& f : t.figures) {
    fmt::format_to(out, "    {:<36} {:<8} {:>26}  {}\n", f.name, f.derived ? "derived" : "seen", Value(f),
                   f.text);
  }
}

void WriteAllocations(Out out, const OomText& t) {
  if (t.allocations.empty()) return;
  fmt::format_to(out, "  {}:\n",
                 t.kind == "buffer-assignment" ? "peak buffers" : "largest program allocations");
  fmt::format_to(out, "    {:>3} {:>10} {:>10} {:>10} {:>9}  {:<16} {:<28} {}\n", "#", "size", "unpadded",
                 "padding", "expansion", "type", "source", "shape / op");
  for (const ProgramAllocation& a : t.allocations) {
    auto text = [](const std::optional<Figure>& f) { return f ? f->text : std::string("-"); };
    fmt::format_to(out, "    {:>3} {:>10} {:>10} {:>10} {:>9}  {:<16} {:<28} {}\n", a.index, text(a.size),
                   text(a.unpadded), text(a.padding), a.expansion.empty() ? "-" : a.expansion,
                   a.type.empty() ? "-" : a.type, a.source.empty() ? "-" : a.source,
                   a.shape.empty() ? (a.cut ? "(cut)" : "-") : a.shape);
    if (!a.op.empty()) fmt::format_to(out, "    {:>3} op: {}\n", "", a.op);
  }
}

}  // namespace

std::string RenderOomTextsText(const std::string& source, const std::vector<OomText>& texts) {
  std::string text;
  Out out(text);
  for (size_t i = 0; i < texts.size(); ++i) {
    const OomText& t = texts[i];
    fmt::format_to(out, "{}{}:{}: {}\n", i == 0 ? "" : "\n", source, t.line, Title(t.kind));
    fmt::format_to(out, "  verdict: {}: {}\n", t.verdict, t.why);
    WriteFigures(out, t);
    if (!t.would_fit.empty()) {
      fmt::format_to(out, "  what would fit:\n");
      for (const std::string& w : t.would_fit) fmt::format_to(out, "    - {}\n", w);
    }
    WriteAllocations(out, t);
    if (!t.missing.empty()) {
      fmt::format_to(out, "  not in this text:\n");
      for (const std::string& m : t.missing) fmt::format_to(out, "    - {}\n", m);
    }
    if (!t.repeated_at.empty()) {
      fmt::format_to(out, "  printed again at line{} {}\n", t.repeated_at.size() == 1 ? "" : "s",
                     fmt::join(t.repeated_at, ", "));
    }
  }
  return text;
}

namespace {

nlohmann::json FigureJson(const Figure& f) {
  nlohmann::json j{{"name", f.name}, {"source", f.derived ? "derived" : "seen"}};
  if (f.unit == "B") {
    j["bytes"] = static_cast<int64_t>(std::llround(f.value));
    j["precision_bytes"] = static_cast<int64_t>(std::llround(f.precision));
  } else if (!f.unit.empty()) {
    j["value"] = f.value;
    j["unit"] = f.unit;
  } else if (f.value != 0) {
    j["value"] = f.value;
  }
  j[f.derived ? "how" : "printed"] = f.text;
  return j;
}

}  // namespace

nlohmann::json RenderOomTextsJson(const std::vector<OomText>& texts) {
  nlohmann::json out = nlohmann::json::array();
  for (const OomText& t : texts) {
    nlohmann::json figures = nlohmann::json::array();
    for (const Figure& f : t.figures) figures.push_back(FigureJson(f));
    nlohmann::json allocations = nlohmann::json::array();
    for (const ProgramAllocation& a : t.allocations) {
      nlohmann::json j{{"index", a.index}, {"op", a.op},     {"shape", a.shape},         {"source", a.source},
                       {"label", a.label}, {"type", a.type}, {"expansion", a.expansion}, {"cut", a.cut}};
      if (a.size) j["size"] = FigureJson(*a.size);
      if (a.unpadded) j["unpadded"] = FigureJson(*a.unpadded);
      if (a.padding) j["padding"] = FigureJson(*a.padding);
      if (a.shape_bytes) j["shape_bytes"] = *a.shape_bytes;
      allocations.push_back(std::move(j));
    }
    out.push_back({{"kind", t.kind},
                   {"line", t.line},
                   {"verdict", t.verdict},
                   {"why", t.why},
                   {"figures", figures},
                   {"would_fit", t.would_fit},
                   {"allocations", allocations},
                   {"missing", t.missing},
                   {"repeated_at", t.repeated_at}});
  }
  return out;
}

}  // namespace hbmsim::trace::oom_text
