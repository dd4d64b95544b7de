#include "trace/core/python_frames.h"

#include <string_view>

namespace hbmsim::trace {
namespace {

bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// A framework's own Python, wherever it was installed (site-packages, a source tree).
bool InPackage(std::string_view path, std::string_view package) {
  const std::string fenced = "/" + std::string(package) + "/";
  return Contains(path, fenced) || path.substr(0, package.size() + 1) == fenced.substr(1);
}

// The interpreter's standard library: threading.py, runpy.py, ...
bool InStandardLibrary(std::string_view path) {
  const size_t lib = path.find("/lib/python");
  if (lib == std::string_view::npos) return false;
  const std::string_view rest = path.substr(lib);
  return !Contains(rest, "site-packages") && !Contains(rest, "dist-packages");
}

}  // namespace

bool IsUserPythonFrame(const StackFrame& f) {
  const std::string_view path = f.filename;
  return f.line > 0 && path.ends_with(".py") && !InPackage(path, "torch") && !InPackage(path, "jax") &&
         !InPackage(path, "jaxlib") && !InStandardLibrary(path);
}

}  // namespace hbmsim::trace
