#include "trace/io/output_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "fmt/format.h"
#include "trace/io/stale_temps.h"
#include "trace/io/temp_registry.h"

namespace hbmsim::trace::io {
namespace {

// The mode open(O_CREAT, 0666) would give a new file: 0666 minus the umask.
mode_t NewFileMode() {
  static const mode_t mode = [] {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return static_cast<mode_t>(0666 & ~mask);
  }();
  return mode;
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

absl::Status CannotWrite(const std::string& path, int err) {
  return absl::InvalidArgumentError(fmt::format("cannot write {}: {}", path, std::strerror(err)));
}

// Where the rename goes: the file a symbolic link names, else the path itself.
std::string ResolveTarget(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr) return path;  // dangling: replace the link
  return resolved;
}

}  // namespace

FdStreamBuf::FdStreamBuf(int fd) : fd_(fd) { setp(buffer_, buffer_ + sizeof(buffer_)); }

bool FdStreamBuf::WriteAll(const char* data, size_t n) {
  while (n > 0 && error_ == 0) {
    const ssize_t w = ::write(fd_, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      error_ = w < 0 ? errno : EIO;
      break;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return error_ == 0;
}

bool FdStreamBuf::Drain() {
  const bool ok = WriteAll(pbase(), static_cast<size_t>(pptr() - pbase()));
  setp(buffer_, buffer_ + sizeof(buffer_));
  return ok;
}

FdStreamBuf::int_type FdStreamBuf::overflow(int_type c) {
  if (!Drain()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

std::streamsize FdStreamBuf::xsputn(const char* s, std::streamsize n) {
  if (n <= epptr() - pptr()) {
    std::memcpy(pptr(), s, static_cast<size_t>(n));
    pbump(static_cast<int>(n));
    return n;
  }
  if (!Drain() || !WriteAll(s, static_cast<size_t>(n))) return 0;
  return n;
}

OutputFile::OutputFile(std::string path, std::string target, std::string temp, int fd, bool owns_fd)
    : path_(std::move(path)),
      target_(std::move(target)),
      temp_(std::move(temp)),
      fd_(fd),
      owns_fd_(owns_fd),
      buf_(fd),
      stream_(&buf_) {
  if (!temp_.empty()) temp_slot_ = RememberTempFile(temp_);
}

absl::StatusOr<std::unique_ptr<OutputFile>> OutputFile::Create(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("cannot write an empty path");
  if (path == "-") {  // messages say "cannot write standard output: ..."
    return std::unique_ptr<OutputFile>(new OutputFile("standard output", path, "", STDOUT_FILENO, false));
  }
  struct stat st;
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return CannotWrite(path, EISDIR);
  if (exists && !S_ISREG(st.st_mode)) {  // a device, FIFO or terminal: written in place
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return CannotWrite(path, errno);
    return std::unique_ptr<OutputFile>(new OutputFile(path, path, "", fd, true));
  }
  // A read-only file stays read-only: the rename would otherwise replace it.
  if (exists && ::access(path.c_str(), W_OK) != 0) return CannotWrite(path, errno);
  std::string target = ResolveTarget(path);
  RemoveStaleTempFiles(DirName(target));  // what a SIGKILLed run left here (stale_temps.h)
  std::string temp = TempFileTemplate(DirName(target), BaseName(target));
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return CannotWrite(path, errno);
  ::flock(fd, LOCK_EX);  // says "being written" to another host's cleanup, which cannot see our pid
  ::fchmod(fd, exists ? (st.st_mode & 07777) : NewFileMode());
  return std::unique_ptr<OutputFile>(new OutputFile(path, std::move(target), std::move(temp), fd, true));
}

OutputFile::~OutputFile() { Discard(); }

absl::Status OutputFile::Error(int err) const { return CannotWrite(path_, err); }

absl::Status OutputFile::status() const {
  return buf_.error() != 0 ? Error(buf_.error()) : absl::OkStatus();
}

absl::Status OutputFile::Write(std::string_view bytes) {
  stream_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (buf_.error() != 0) return Error(buf_.error());
  return absl::OkStatus();
}

absl::Status OutputFile::Finish() {
  if (done_) return absl::FailedPreconditionError(fmt::format("{}: already committed or discarded", path_));
  if (finished_) return absl::OkStatus();
  int err = buf_.Drain() ? 0 : buf_.error();
  if (err == 0 && !temp_.empty() && ::fsync(fd_) != 0) err = errno;
  if (owns_fd_) {
    if (::close(fd_) != 0 && err == 0) err = errno;
    owns_fd_ = false;
  }
  if (err != 0) {
    Discard();
    return Error(err);
  }
  finished_ = true;
  return absl::OkStatus();
}

absl::Status OutputFile::Commit() {
  if (absl::Status s = Finish(); !s.ok()) return s;
  if (!temp_.empty() && ::rename(temp_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    Discard();
    return Error(err);
  }
  done_ = true;
  ForgetTempFile(temp_slot_);
  temp_slot_ = -1;
  return absl::OkStatus();
}

void OutputFile::Discard() {
  if (owns_fd_) {
    ::close(fd_);
    owns_fd_ = false;
  }
  if (!done_ && !temp_.empty()) ::unlink(temp_.c_str());
  ForgetTempFile(temp_slot_);
  temp_slot_ = -1;
  done_ = true;
}

namespace {
thread_local std::string* t_stdout_capture = nullptr;
}  // namespace

ScopedStdoutCapture::ScopedStdoutCapture(std::string* sink) : previous_(t_stdout_capture) {
  t_stdout_capture = sink;
}

ScopedStdoutCapture::~ScopedStdoutCapture() { t_stdout_capture = previous_; }

absl::Status WriteStdout(std::string_view text) {
  if (t_stdout_capture != nullptr) {
    t_stdout_capture->append(text);
    return absl::OkStatus();
  }
  errno = 0;
  const size_t n = std::fwrite(text.data(), 1, text.size(), stdout);
  if (n == text.size() && std::fflush(stdout) == 0) return absl::OkStatus();
  return CannotWrite("standard output", errno != 0 ? errno : EIO);
}

}  // namespace hbmsim::trace::io
