#include "sim/report/user_frames.h"

#include <string_view>

#include "fmt/format.h"
#include "sim/layer.h"
#include "trace/core/python_frames.h"

namespace hbmsim::sim {
namespace {

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool IsUserFrame(const StackFrame& f) { return IsUserPythonFrame(f); }

std::vector<StackFrame> UserFrames(const std::vector<StackFrame>& frames) {
  std::vector<StackFrame> out;
  for (const StackFrame& f : frames) {
    if (IsUserFrame(f)) out.push_back(f);
  }
  return out;
}

std::string ShortFrameText(const StackFrame& f) {
  return fmt::format("{}:{} {}", BaseName(f.filename), f.line, f.name);
}

std::string FrameText(const StackFrame& f) { return fmt::format("{}:{} in {}", f.filename, f.line, f.name); }

std::string TopUserFrame(const ContextTable* table, uint32_t frames) {
  if (table == nullptr) return "";
  for (uint32_t id : table->list(frames)) {
    if (IsUserFrame(table->frame(id))) return ShortFrameText(table->frame(id));
  }
  return "";
}

std::function<std::string(const Event&)> TopUserFrames(const EventReader& events) {
  const ContextTable* table = events.context_table();
  if (table == nullptr) return nullptr;
  return [&events, table](const Event&) { return TopUserFrame(table, events.context().frames); };
}

}  // namespace hbmsim::sim
