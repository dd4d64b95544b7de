// Every input source readable by path, whatever it is. The readers open a
// path, sniffing reads a file's first bytes and some formats read twice (a
// diagnose pass per kind of record), none of which a pipe allows. So an input
// that is not a regular file is spooled ONCE, at open, into an anonymous
// temporary (created in $TMPDIR and unlinked at once: nothing is left behind,
// even after SIGKILL), which readers then reopen as /proc/self/fd/N:
//
//   "-"  /dev/stdin  FIFO  <(cmd)  ──read once──▶  tmp (unlinked) = /proc/self/fd/N
//   a regular file                 ──────────────▶  read in place
//
// Messages must still say what the user typed: Rename() turns the spooled
// path back into the user's name (`-` is called "<stdin>").
// Directories and unreadable paths are errors here, before any reader runs.
#ifndef HBMSIM_TRACE_IO_INPUT_FILE_H_
#define HBMSIM_TRACE_IO_INPUT_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hbmsim::trace::io {

class InputFile {
 public:
  InputFile() = default;
  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  ~InputFile();

  // The path a reader opens.
  const std::string& path() const { return path_; }
  // The name messages use.
  const std::string& name() const { return name_; }
  bool spooled() const { return fd_ >= 0; }
  // `message` with path() replaced by name().
  std::string Rename(std::string_view message) const;
  absl::Status Rename(const absl::Status& status) const;

 private:
  friend absl::StatusOr<InputFile> OpenInputFile(const std::string& path);
  std::string path_;
  std::string name_;
  int fd_ = -1;  // the spooled temporary, held open so /proc/self/fd/N stays valid
};

// A pipe is spooled up to a cap, so `hbmsim replay /dev/zero` ends with an
// error instead of filling $TMPDIR: kDefaultPipeLimit, or the size in the
// environment variable HBMSIM_PIPE_LIMIT ("64GiB"; docs/cli.md).
inline constexpr uint64_t kDefaultPipeLimit = uint64_t{4} << 30;

// Errors (InvalidArgument): "cannot read PATH: REASON", "PATH is a directory",
// "cannot spool PATH to DIR: REASON", "cannot read PATH: more than N B (4GiB)
// piped in, ...", "HBMSIM_PIPE_LIMIT=X: not a size in bytes (e.g. 64GiB)".
absl::StatusOr<InputFile> OpenInputFile(const std::string& path);

}  // namespace hbmsim::trace::io

#endif  // HBMSIM_TRACE_IO_INPUT_FILE_H_
