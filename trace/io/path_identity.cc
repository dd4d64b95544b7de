#include "trace/io/path_identity.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string_view>

#include "fmt/format.h"

namespace hbmsim::trace::io {
namespace {

struct FileId {
  dev_t dev;
  ino_t ino;
  bool operator==(const FileId&) const = default;
};

// The regular file `path` names (fd 0 or 1 for "-"), if there is one.
std::optional<FileId> RegularFileId(const std::string& path, int dash_fd) {
  struct stat st;
  const int rc = path == "-" ? ::fstat(dash_fd, &st) : ::stat(path.c_str(), &st);
  if (rc != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

// For two outputs that do not exist yet: the same directory and name.
std::string CanonicalNewPath(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  char resolved[PATH_MAX];
  if (::realpath(dir.c_str(), resolved) == nullptr) return path;
  return std::string(resolved) + "/" + base;
}

constexpr std::string_view kStdout = "standard output";

// "--json a.json", "TRACE -", or just "standard output".
std::string Describe(const NamedPath& p) { return p.role == kStdout ? p.role : p.role + " " + p.path; }

absl::Status Refuse(const NamedPath& out, const NamedPath& in) {
  return absl::InvalidArgumentError(
      fmt::format("{} is the input {}; refusing to overwrite it", Describe(out), Describe(in)));
}

bool SameOutput(const std::string& a, const std::string& b) {
  if (a == "-" || b == "-") return false;
  const std::optional<FileId> ia = RegularFileId(a, STDOUT_FILENO);
  const std::optional<FileId> ib = RegularFileId(b, STDOUT_FILENO);
  if (ia && ib) return *ia == *ib;
  return CanonicalNewPath(a) == CanonicalNewPath(b);
}

}  // namespace

absl::Status CheckOutputsAreNotInputs(const std::vector<NamedPath>& inputs,
                                      const std::vector<NamedPath>& outputs) {
  std::vector<std::pair<FileId, const NamedPath*>> read;
  for (const NamedPath& in : inputs) {
    if (in.path.empty()) continue;
    if (std::optional<FileId> id = RegularFileId(in.path, STDIN_FILENO)) read.emplace_back(*id, &in);
  }
  std::vector<NamedPath> written = outputs;
  written.push_back({std::string(kStdout), "-"});
  for (const NamedPath& out : written) {
    if (out.path.empty()) continue;
    std::optional<FileId> id = RegularFileId(out.path, STDOUT_FILENO);
    if (!id) continue;
    for (const auto& [in_id, in] : read) {
      if (*id == in_id) return Refuse(out, *in);
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (size_t j = i + 1; j < outputs.size(); ++j) {
      if (outputs[i].path.empty() || outputs[j].path.empty()) continue;
      if (SameOutput(outputs[i].path, outputs[j].path)) {
        return absl::InvalidArgumentError(fmt::format("{} and {} both write {}", outputs[i].role,
                                                      outputs[j].role, outputs[i].path));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace hbmsim::trace::io
