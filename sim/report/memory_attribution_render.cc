// Text and JSON of MemoryAttribution (see the header for the layout).
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "sim/layer.h"
#include "sim/report/memory_attribution.h"
#include "trace/core/human_bytes.h"
#include "trace/core/json_text.h"

namespace hbmsim::sim {
namespace {

std::string Human(uint64_t bytes) { return HumanReadableNumBytes(Bytes(bytes)); }

// One grouping: the top `rows` groups and, when more exist, one line for the rest.
void RenderGroups(std::string_view title, const std::vector<MemoryGroup>& groups, size_t rows, uint64_t total,
                  std::string& out) {
  if (groups.empty()) return;
  if (groups.size() == rows + 1) ++rows;  // a "1 more group" line would hide no more than the group
  out += fmt::format("  by {}\n", title);
  uint64_t shown = 0;
  uint64_t shown_buffers = 0;
  for (size_t i = 0; i < groups.size() && i < rows; ++i) {
    const MemoryGroup& g = groups[i];
    out += fmt::format("    {:>5.1f}%  {:>14} {:>10}  {:>6} buf  {}\n", 100 * g.share, g.bytes,
                       Human(g.bytes), g.buffers, g.key);
    shown += g.bytes;
    shown_buffers += g.buffers;
  }
  if (groups.size() > rows) {
    const uint64_t rest = total - shown;
    uint64_t rest_buffers = 0;
    for (size_t i = rows; i < groups.size(); ++i) rest_buffers += groups[i].buffers;
    out += fmt::format("    {:>5.1f}%  {:>14} {:>10}  {:>6} buf  ({} more groups)\n",
                       total == 0 ? 0.0 : 100.0 * static_cast<double>(rest) / static_cast<double>(total),
                       rest, Human(rest), rest_buffers, groups.size() - rows);
  }
}

bool SameGroups(const std::vector<MemoryGroup>& a, const std::vector<MemoryGroup>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].bytes != b[i].bytes) return false;
  }
  return true;
}

// Whether two breakdowns show the same held buffers (their events aside).
bool SameHeld(const MemoryBreakdown& a, const MemoryBreakdown& b) {
  if (a.held_bytes != b.held_bytes || a.held_buffers != b.held_buffers || a.largest.size() != b.largest.size()) {
    return false;
  }
  for (size_t i = 0; i < a.largest.size(); ++i) {
    if (a.largest[i].id != b.largest[i].id || a.largest[i].event != b.largest[i].event) return false;
  }
  return SameGroups(a.by_tag, b.by_tag) && SameGroups(a.by_op, b.by_op) && SameGroups(a.by_frame, b.by_frame);
}

void RenderBreakdown(std::string_view title, const MemoryBreakdown& m, size_t rows, std::string& out) {
  out += fmt::format("{} (event {}): {} bytes ({}) held in {} buffers\n", title, m.event.value(),
                     m.held_bytes, Human(m.held_bytes), m.held_buffers);
  if (NothingTagged(m.by_tag)) {
    out += "  by tag: no held buffer carries a tag\n";
  } else {
    RenderGroups("tag", m.by_tag, rows, m.held_bytes, out);
    // Tags without an instance number are their own ops: the same table twice says nothing new.
    if (SameGroups(m.by_op, m.by_tag)) {
      out += "  by op: the same as by tag\n";
    } else {
      RenderGroups("op", m.by_op, rows, m.held_bytes, out);
    }
  }
  RenderGroups("top user frame", m.by_frame, rows, m.held_bytes, out);
  if (m.largest.empty()) return;
  out += fmt::format("  largest {} buffers\n", m.largest.size());
  for (const HeldBuffer& b : m.largest) {
    out += fmt::format("    {:>14} {:>10}  id {} (event {}) {}{}\n", b.bytes, Human(b.bytes), b.id,
                       b.event.value(), b.tag, b.frame.empty() ? "" : " at " + b.frame);
  }
}

nlohmann::json GroupsJson(const std::vector<MemoryGroup>& groups) {
  nlohmann::json out = nlohmann::json::array();
  for (const MemoryGroup& g : groups) {
    out.push_back({{"key", g.key}, {"bytes", g.bytes}, {"buffers", g.buffers}, {"share", g.share}});
  }
  return out;
}

nlohmann::json BreakdownJson(const std::optional<MemoryBreakdown>& m) {
  if (!m) return nullptr;
  nlohmann::json largest = nlohmann::json::array();
  for (const HeldBuffer& b : m->largest) {
    largest.push_back(
        {{"id", b.id}, {"bytes", b.bytes}, {"event", b.event.value()}, {"tag", b.tag}, {"frame", b.frame}});
  }
  return {{"event", m->event.value()},
          {"held_bytes", m->held_bytes},
          {"held_buffers", m->held_buffers},
          {"by_tag", GroupsJson(m->by_tag)},
          {"by_op", GroupsJson(m->by_op)},
          {"by_frame", GroupsJson(m->by_frame)},
          {"largest", largest}};
}

}  // namespace

// A recording with no tag= at all groups everything under one key: a table of
// one 100 % row would only push the frames down.
bool NothingTagged(const std::vector<MemoryGroup>& by_tag) {
  return by_tag.size() == 1 && by_tag[0].key == "(untagged)";
}

std::string RenderMemoryAttributionText(const MemoryAttribution& a, size_t rows, bool name_failed_request) {
  std::string out;
  const std::optional<MemoryBreakdown> peak = a.AtPeak();
  if (!peak) return "Where the memory went: no buffer was held\n";
  if (const std::optional<FailedRequest>& f = a.first_failure(); f && a.AtFirstFailure()) {
    if (name_failed_request) {
      out += fmt::format("The first failed request (event {}): {} bytes ({}) for id {}, {}, tag {}{}\n",
                         f->event.value(), f->requested, Human(f->requested), f->id, AllocStatusName(f->kind),
                         f->tag, f->frame.empty() ? "" : " at " + f->frame);
    }
    RenderBreakdown("Where the memory was at the first failure", *a.AtFirstFailure(), rows, out);
    // Often the peak is the alloc just before the failure: the same tables again would bury the rest.
    if (SameHeld(*peak, *a.AtFirstFailure())) {
      out += fmt::format(
          "Where the memory was at the peak (event {}): {} bytes ({}) held in {} buffers, the same tables as at the "
          "first failure\n",
          peak->event.value(), peak->held_bytes, Human(peak->held_bytes), peak->held_buffers);
      return out;
    }
  }
  RenderBreakdown("Where the memory was at the peak", *peak, rows, out);
  return out;
}

nlohmann::json MemoryAttributionJson(const MemoryAttribution& a) {
  nlohmann::json failed = nullptr;
  if (const std::optional<FailedRequest>& f = a.first_failure()) {
    failed = {{"event", f->event.value()},        {"id", f->id},   {"requested", f->requested},
              {"kind", AllocStatusName(f->kind)}, {"tag", f->tag}, {"frame", f->frame}};
  }
  return {{"peak", BreakdownJson(a.AtPeak())},
          {"first_failure", BreakdownJson(a.AtFirstFailure())},
          {"failed_request", failed}};
}

std::string RenderMemoryAttributionJson(const MemoryAttribution& a) {
  const nlohmann::json root = MemoryAttributionJson(a);
  // Tags come from the user's trace: invalid UTF-8 becomes U+FFFD, never a throw.
  return JsonText(root, 2) + "\n";
}

}  // namespace hbmsim::sim
