#include "trace/io/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "trace/core/human_bytes.h"
#include "trace/core/numbers.h"

namespace hbmsim::trace::io {
namespace {

absl::Status CannotRead(const std::string& name, int err) {
  return absl::InvalidArgumentError(fmt::format("cannot read {}: {}", name, std::strerror(err)));
}

std::string TempDir() {
  const char* dir = std::getenv("TMPDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

// The most bytes spooled from one pipe: HBMSIM_PIPE_LIMIT (a size as the
// command line takes it, "64GiB") or kDefaultPipeLimit.
absl::StatusOr<uint64_t> PipeLimit() {
  const char* text = std::getenv("HBMSIM_PIPE_LIMIT");
  if (text == nullptr || *text == '\0') return kDefaultPipeLimit;
  absl::StatusOr<Bytes> limit = ParseBytes(text, /*allow_more_units=*/true);
  if (!limit.ok() || limit->value() == 0) {
    return absl::InvalidArgumentError(
        fmt::format("HBMSIM_PIPE_LIMIT={}: not a size in bytes (e.g. 64GiB)", text));
  }
  return limit->value();
}

// Copies `from` to the end into `to`; 0 or the errno of the failing side.
// Stops with `over_limit` set once more than `limit` bytes came.
int CopyAll(int from, int to, uint64_t limit, bool& read_failed, bool& over_limit) {
  std::vector<char> buffer(1 << 16);
  uint64_t copied = 0;
  while (true) {
    const ssize_t n = ::read(from, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      read_failed = true;
      return errno;
    }
    if (n == 0) return 0;
    copied += static_cast<uint64_t>(n);
    if (copied > limit) {
      over_limit = true;
      return EFBIG;
    }
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(to, buffer.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return w < 0 ? errno : EIO;
      done += w;
    }
  }
}

}  // namespace

InputFile::InputFile(InputFile&& other) noexcept
    : path_(std::move(other.path_)), name_(std::move(other.name_)), fd_(std::exchange(other.fd_, -1)) {}

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    name_ = std::move(other.name_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string InputFile::Rename(std::string_view message) const {
  std::string out(message);
  if (path_ == name_ || path_.empty()) return out;
  for (size_t at = out.find(path_); at != std::string::npos; at = out.find(path_, at + name_.size())) {
    out.replace(at, path_.size(), name_);
  }
  return out;
}

absl::Status InputFile::Rename(const absl::Status& status) const {
  if (status.ok()) return status;
  return absl::Status(status.code(), Rename(std::string(status.message())));
}

absl::StatusOr<InputFile> OpenInputFile(const std::string& path) {
  InputFile input;
  input.name_ = path == "-" ? "<stdin>" : path;
  input.path_ = path;
  struct stat st;
  const int rc = path == "-" ? ::fstat(STDIN_FILENO, &st) : ::stat(path.c_str(), &st);
  if (rc != 0) return CannotRead(input.name_, errno);
  if (S_ISDIR(st.st_mode)) return absl::InvalidArgumentError(fmt::format("{} is a directory", path));
  // A regular file is read in place, once its readability is known.
  const int source = path == "-" ? ::dup(STDIN_FILENO) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (source < 0) return CannotRead(input.name_, errno);
  if (S_ISREG(st.st_mode) && path != "-") {
    ::close(source);
    return input;
  }
  absl::StatusOr<uint64_t> limit = PipeLimit();
  if (!limit.ok()) {
    ::close(source);
    return limit.status();
  }
  const std::string dir = TempDir();
  const int spool = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  int temp_fd = spool;
  if (temp_fd < 0) {  // a file system without O_TMPFILE: a named temporary, unlinked at once
    std::string temp = dir + "/hbmsim-input-XXXXXX";
    temp_fd = ::mkostemp(temp.data(), O_CLOEXEC);
    if (temp_fd >= 0) ::unlink(temp.c_str());
  }
  if (temp_fd < 0) {
    const int err = errno;
    ::close(source);
    return absl::InvalidArgumentError(fmt::format("cannot spool {} to {}: {}", input.name_, dir,
                                                  std::strerror(err)));
  }
  bool read_failed = false, over_limit = false;
  const int err = CopyAll(source, temp_fd, *limit, read_failed, over_limit);
  ::close(source);
  if (err != 0) {
    ::close(temp_fd);
    if (read_failed) return CannotRead(input.name_, err);
    if (over_limit) {
      return absl::InvalidArgumentError(fmt::format(
          "cannot read {}: more than {} B ({}) piped in, the most spooled to {}; give it as a file, or raise "
          "the cap with HBMSIM_PIPE_LIMIT=SIZE",
          input.name_, *limit, HumanReadableNumBytes(Bytes(*limit)), dir));
    }
    return absl::InvalidArgumentError(fmt::format("cannot spool {} to {}: {}", input.name_, dir,
                                                  std::strerror(err)));
  }
  input.fd_ = temp_fd;
  input.path_ = fmt::format("/proc/self/fd/{}", temp_fd);
  return input;
}

}  // namespace hbmsim::trace::io
