#include "sim/report/user_frames.h"

#include <string_view>

#include "fmt/format.h"

namespace hbmsim {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// torch's own Python, wherever it was installed (site-packages, a source tree).
bool InTorch(std::string_view path) {
  return Contains(path, "/torch/") || path.substr(0, 6) == "torch/";
}

// The interpreter's standard library: threading.py, runpy.py, ...
bool InStandardLibrary(std::string_view path) {
  const size_t lib = path.find("/lib/python");
  if (lib == std::string_view::npos) return false;
  const std::string_view rest = path.substr(lib);
  return !Contains(rest, "site-packages") && !Contains(rest, "dist-packages");
}

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool IsUserFrame(const StackFrame& f) {
  return f.line > 0 && EndsWith(f.filename, ".py") && !InTorch(f.filename) && !InStandardLibrary(f.filename);
}

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

}  // namespace hbmsim
