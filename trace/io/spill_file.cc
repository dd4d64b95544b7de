#include "trace/io/spill_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fmt/format.h"

namespace hbmsim::trace::io {
namespace {

// An unlinked read-write file in `dir`, or -1 with errno set.
int AnonymousFile(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  std::string temp = dir + "/.hbmsim-spill-XXXXXX";
  const int named = ::mkostemp(temp.data(), O_CLOEXEC);
  if (named >= 0) ::unlink(temp.c_str());
  return named;
}

}  // namespace

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

absl::StatusOr<std::unique_ptr<SpillFile>> SpillFile::Create(const std::string& dir) {
  std::vector<std::string> candidates;
  if (!dir.empty()) candidates.push_back(dir);
  const char* tmp = std::getenv("TMPDIR");
  candidates.push_back(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp");
  int err = 0;
  for (const std::string& d : candidates) {
    const int fd = AnonymousFile(d);
    if (fd >= 0) return std::unique_ptr<SpillFile>(new SpillFile(fd, d));
    err = errno;
  }
  return absl::InvalidArgumentError(
      fmt::format("cannot create a scratch file in {}: {}", candidates.front(), std::strerror(err)));
}

SpillFile::~SpillFile() { ::close(fd_); }

absl::Status SpillFile::CopyTo(OutputFile& out) {
  const auto failed = [&](int err) {
    return absl::InvalidArgumentError(
        fmt::format("cannot use the scratch file in {}: {}", dir_, std::strerror(err)));
  };
  if (!buf_.Drain()) return failed(buf_.error());
  std::vector<char> chunk(1 << 16);
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd_, chunk.data(), chunk.size(), at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return failed(errno);
    if (n == 0) return absl::OkStatus();
    if (absl::Status s = out.Write(std::string_view(chunk.data(), static_cast<size_t>(n))); !s.ok()) return s;
    at += n;
  }
}

}  // namespace hbmsim::trace::io
