#include "trace/text/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace hbmsim::trace {
namespace {

class FileSource : public ByteSource {
 public:
  explicit FileSource(int fd) : fd_(fd) {}
  ~FileSource() override { ::close(fd_); }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  absl::StatusOr<size_t> Read(char* dst, size_t n) override {
    while (true) {
      const ssize_t got = ::read(fd_, dst, n);
      if (got >= 0) return static_cast<size_t>(got);
      if (errno != EINTR) {
        return absl::InvalidArgumentError(fmt::format("read error: {}", std::strerror(errno)));
      }
    }
  }

 private:
  int fd_;
};

class StringByteSource : public ByteSource {
 public:
  explicit StringByteSource(std::string text) : text_(std::move(text)) {}

  absl::StatusOr<size_t> Read(char* dst, size_t n) override {
    const size_t count = std::min(n, text_.size() - pos_);
    std::memcpy(dst, text_.data() + pos_, count);
    pos_ += count;
    return count;
  }

 private:
  std::string text_;
  size_t pos_ = 0;
};

absl::Status CannotOpen(const std::string& path, int error) {
  return absl::InvalidArgumentError(fmt::format("cannot open {}: {}", path, std::strerror(error)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return CannotOpen(path, errno);
  struct stat st;
  // A directory opens fine but fails on the first read; say so up front.
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return CannotOpen(path, EISDIR);
  }
  return std::unique_ptr<ByteSource>(std::make_unique<FileSource>(fd));
}

std::unique_ptr<ByteSource> StringSource(std::string text) {
  return std::make_unique<StringByteSource>(std::move(text));
}

}  // namespace hbmsim::trace
