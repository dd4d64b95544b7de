#include "trace/io/stale_temps.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "fmt/format.h"

namespace hbmsim::trace::io {
namespace {

constexpr std::string_view kMarker = ".hbmsim-";
constexpr size_t kRandomChars = 6;  // mkostemp's XXXXXX

// True when a process with that pid exists (EPERM: it does, it is not ours to signal).
bool ProcessExists(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// True when `path` is a regular file of ours that no writer holds locked.
bool IsOursAndUnlocked(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  const bool ours = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid();
  const bool unlocked = ours && ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);  // also drops the lock just taken
  return unlocked;
}

}  // namespace

std::string TempFileTemplate(const std::string& dir, const std::string& base) {
  return fmt::format("{}/.{}{}{}-XXXXXX", dir, base, kMarker, ::getpid());
}

std::optional<pid_t> TempFileWriter(std::string_view name) {
  // .NAME.hbmsim-PID-XXXXXX: parsed from the end, since NAME may hold ".hbmsim-" too.
  if (!name.starts_with('.') || name.size() < kMarker.size() + kRandomChars + 3) return std::nullopt;
  const std::string_view head = name.substr(0, name.size() - kRandomChars);
  if (!head.ends_with('-')) return std::nullopt;
  const std::string_view with_pid = head.substr(0, head.size() - 1);
  const size_t marker = with_pid.rfind(kMarker);
  if (marker == std::string_view::npos || marker == 0) return std::nullopt;
  const std::string_view digits = with_pid.substr(marker + kMarker.size());
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (ec != std::errc() || end != digits.data() + digits.size() || pid <= 0) return std::nullopt;
  return pid;
}

int RemoveStaleTempFiles(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return 0;
  int removed = 0;
  while (const dirent* entry = ::readdir(d)) {
    const std::optional<pid_t> writer = TempFileWriter(entry->d_name);
    if (!writer || *writer == ::getpid() || ProcessExists(*writer)) continue;
    const std::string path = fmt::format("{}/{}", dir, entry->d_name);
    if (IsOursAndUnlocked(path) && ::unlink(path.c_str()) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

}  // namespace hbmsim::trace::io
