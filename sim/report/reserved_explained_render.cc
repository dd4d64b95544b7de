// The text and JSON of "Reserved, explained" (reserved_explained.h).
#include <algorithm>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "sim/layer.h"
#include "sim/report/reserved_explained.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim {
namespace {

using Json = nlohmann::ordered_json;

std::string PartName(const ReservedPart& p) { return p.key.empty() ? p.cause : fmt::format("{}  {}", p.cause, p.key); }

double Share(Bytes part, Bytes whole) {
  return whole.is_zero() ? 0.0 : 100.0 * static_cast<double>(part.value()) / static_cast<double>(whole.value());
}

void PartLine(std::string& out, Bytes bytes, Bytes reserved, uint64_t blocks, std::string_view name) {
  out += fmt::format("    {:>16} {:>10} {:>6.1f}% {:>7}  {}\n", bytes.value(), HumanReadableNumBytes(bytes),
                     Share(bytes, reserved), blocks, name);
}

std::string Plural(uint64_t n, std::string_view one) { return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s"); }

// Under a part of free blocks, who freed its bytes: the top few labels, the
// rest summed. Nothing when no byte of it was freed in the trace.
constexpr size_t kFreedByRows = 3;
// How the text names the bytes of kNotFreedInTrace.
constexpr std::string_view kNeverFreed = "never freed in the trace (split off unused, or free from the start)";
void RenderFreedBy(const ExplainedPart& p, std::string& out) {
  const bool any_free = std::any_of(p.freed_by.begin(), p.freed_by.end(),
                                    [](const FreedBy& f) { return f.label != kNotFreedInTrace; });
  if (!any_free) return;
  FreedBy others;  // its blocks unused: see `line`
  uint64_t other_labels = 0;
  // The blocks of several labels overlap (one block, freed by two), so the
  // "others" line sums bytes and frees but shows no blocks.
  auto line = [&](const FreedBy& f, std::string_view who, bool with_blocks) {
    out += fmt::format("    {:>16} {:>10} {:>7} {:>7}    {}{}\n", f.bytes.value(), HumanReadableNumBytes(f.bytes),
                       "", with_blocks ? std::to_string(f.blocks) : "", who,
                       f.frees == 0 ? "" : fmt::format(" ({})", Plural(f.frees, "free")));
  };
  // A single row past the top few is shown as it is: summing it would only hide its name.
  const size_t shown = p.freed_by.size() == kFreedByRows + 1 ? p.freed_by.size() : kFreedByRows;
  for (size_t i = 0; i < p.freed_by.size(); ++i) {
    const FreedBy& f = p.freed_by[i];
    if (i < shown) {
      line(f, f.label == kNotFreedInTrace ? std::string(kNeverFreed) : "freed by " + f.label, true);
      continue;
    }
    others.bytes += f.bytes;
    others.frees += f.frees;
    ++other_labels;
  }
  if (other_labels > 0) line(others, fmt::format("freed by others ({})", Plural(other_labels, "label")), false);
}

// The requested parts past the first `rows` are summed into one line: a
// recording with a thousand frames would otherwise bury the causes.
void RenderParts(const ReservedMoment& m, size_t rows, std::string& out) {
  out += fmt::format("    {:>16} {:>10} {:>7} {:>7}  part\n", "bytes", "", "share", "blocks");
  size_t requested_shown = 0;
  Bytes rest;
  uint64_t rest_blocks = 0, rest_labels = 0;
  auto flush_rest = [&] {
    if (rest_labels == 0) return;
    PartLine(out, rest, m.reserved, rest_blocks, fmt::format("requested  ({} more labels)", rest_labels));
    rest_labels = 0;
  };
  for (const ExplainedPart& p : m.parts) {
    if (p.cause == "requested" && requested_shown++ >= rows) {
      rest += p.bytes;
      rest_blocks += p.blocks;
      ++rest_labels;
      continue;
    }
    if (p.cause != "requested") flush_rest();
    PartLine(out, p.bytes, m.reserved, p.blocks, PartName(p));
    RenderFreedBy(p, out);
  }
  flush_rest();
  out += fmt::format("    {:>16} {:>10} {:>6.1f}% {:>7}  reserved\n", m.Sum().value(), HumanReadableNumBytes(m.Sum()),
                     Share(m.Sum(), m.reserved), "");
}

std::string CreatorText(const CachedBlockExplained& b) {
  if (!b.created_by) return "its region was held before the trace";
  return fmt::format("its region obtained for event {} (id {}, {})", b.created_by->event.value(), b.created_by->id,
                     b.created_by->label);
}

// "" when the frees were not followed (a state without its trace).
std::string FreerText(const ReservedMoment& m, const CachedBlockExplained& b) {
  if (!m.frees_followed) return "";
  if (!b.freed_by) return "; none of it freed in the trace";
  const BlockFreer& f = *b.freed_by;
  return fmt::format("; {} of it freed by {}, the last at event {} (id {}, {})", HumanReadableNumBytes(f.bytes),
                     Plural(f.frees, "free"), f.event.value(), f.id, f.label);
}

std::string InnerText(const CachedBlock& c) {
  if (c.inner_size.is_zero()) return "";
  return fmt::format(", {} {} inside", HumanReadableNumBytes(c.inner_size), c.inner_cause);
}

void RenderMoment(std::string_view title, const ReservedMoment& m, size_t rows, std::string& out) {
  out += fmt::format("  {}: {} B ({}) reserved, {} B ({}) allocated\n", title, m.reserved.value(), HumanReadableNumBytes(m.reserved), m.allocated.value(),
                     HumanReadableNumBytes(m.allocated));
  RenderParts(m, rows, out);
  if (m.largest_cached.empty()) return;
  out += "    the largest free blocks it keeps:\n";
  for (const CachedBlockExplained& b : m.largest_cached) {
    const CachedBlock& c = b.block;
    out += fmt::format("    {:>16} {:>10}  {}{}{} at {:#x}; {}{}\n", c.size.value(), HumanReadableNumBytes(c.size),
                       c.cause, c.key.empty() ? "" : fmt::format(" ({})", c.key), InnerText(c), c.offset.value(),
                       CreatorText(b), FreerText(m, b));
  }
}

bool SameParts(const ReservedMoment& a, const ReservedMoment& b) {
  if (a.reserved != b.reserved || a.parts.size() != b.parts.size()) return false;
  for (size_t i = 0; i < a.parts.size(); ++i) {
    const ExplainedPart &x = a.parts[i], &y = b.parts[i];
    if (x.cause != y.cause || x.key != y.key || x.bytes != y.bytes || x.blocks != y.blocks) return false;
    if (x.freed_by != y.freed_by) return false;
  }
  return true;
}

Json FreedByJson(const std::vector<FreedBy>& rows) {
  Json out = Json::array();
  for (const FreedBy& f : rows) {
    out.push_back(Json{{"label", f.label}, {"bytes", f.bytes.value()}, {"blocks", f.blocks}, {"frees", f.frees}});
  }
  return out;
}

Json PartJson(const ExplainedPart& p) {
  Json j{{"cause", p.cause}};
  if (!p.key.empty()) j["key"] = p.key;
  j["bytes"] = p.bytes.value();
  j["blocks"] = p.blocks;
  if (!p.freed_by.empty()) j["freed_by"] = FreedByJson(p.freed_by);
  return j;
}

// A cached block; "freed_by" only when the frees were followed (null then when no free made it).
Json CachedBlockJson(const CachedBlockExplained& b, bool frees_followed) {
  Json j{{"offset", b.block.offset.value()}, {"size", b.block.size.value()}, {"cause", b.block.cause}};
  if (!b.block.key.empty()) j["key"] = b.block.key;
  if (!b.block.inner_size.is_zero()) {
    j["inner"] = Json{
        {"cause", b.block.inner_cause}, {"offset", b.block.inner_offset.value()}, {"bytes", b.block.inner_size.value()}};
  }
  j["created_by"] = b.created_by ? Json{{"event", b.created_by->event.value()},
                                        {"id", b.created_by->id},
                                        {"label", b.created_by->label}}
                                 : Json(nullptr);
  if (!frees_followed) return j;
  j["freed_by"] = b.freed_by ? Json{{"event", b.freed_by->event.value()},
                                    {"id", b.freed_by->id},
                                    {"label", b.freed_by->label},
                                    {"frees", b.freed_by->frees},
                                    {"bytes", b.freed_by->bytes.value()}}
                             : Json(nullptr);
  return j;
}

Json MomentOrNull(const std::optional<ReservedMoment>& m) { return m ? ReservedMomentJson(*m) : Json(nullptr); }

}  // namespace

std::string RenderReservedText(const ReservedExplainer& x, std::string_view policy, size_t rows) {
  std::string out = fmt::format(
      "Reserved, explained ({}): every byte the policy held from the device, in one part each "
      "(requested by the user's frame or tag, rounding, and why each free block is kept)\n",
      policy);
  struct Named {
    std::string_view title;
    const std::optional<ReservedMoment>* moment;
  };
  const std::vector<Named> moments = {{"at the peak of reserved", &x.peak()},
                                      {"at the first failure", &x.first_failure()},
                                      {"at the end", &x.end()}};
  std::vector<const Named*> shown;
  for (const Named& n : moments) {
    if (!*n.moment) continue;
    const Named* same = nullptr;
    for (const Named* s : shown) {
      if (SameParts(**s->moment, **n.moment)) same = s;
    }
    if (same != nullptr) {
      out += fmt::format("  {} (event {}): the same parts as {}\n", n.title, (*n.moment)->event.value(), same->title);
      continue;
    }
    RenderMoment(fmt::format("{} (event {})", n.title, (*n.moment)->event.value()), **n.moment, rows, out);
    shown.push_back(&n);
  }
  return out;
}

std::string RenderReservedMomentText(std::string_view title, const ReservedMoment& m, size_t rows) {
  std::string out;
  RenderMoment(title, m, rows, out);
  return out;
}

Json ReservedMomentJson(const ReservedMoment& m) {
  Json parts = Json::array();
  for (const ExplainedPart& p : m.parts) parts.push_back(PartJson(p));
  Json cached = Json::array();
  for (const CachedBlockExplained& b : m.largest_cached) cached.push_back(CachedBlockJson(b, m.frees_followed));
  return Json{{"event", m.event.value()},
              {"reserved", m.reserved.value()},
              {"allocated", m.allocated.value()},
              {"parts", std::move(parts)},
              {"largest_cached", std::move(cached)}};
}

Json ReservedExplainedJson(const ReservedExplainer& x) {
  return Json{{"peak", MomentOrNull(x.peak())},
              {"first_failure", MomentOrNull(x.first_failure())},
              {"end", MomentOrNull(x.end())}};
}

}  // namespace hbmsim::sim
