// An output that is either complete at its final path or absent from it.
//
//   Create("out/report.json")        Commit()
//   out/.report.json.hbmsim-PID-Ab12Cd  ──fsync, close, rename──▶  out/report.json
//
// The bytes go to a temporary in the target's directory (same file system,
// so rename() is atomic); Commit() flushes, fsyncs, closes and renames it
// into place. An error, a destructor without Commit(), or SIGINT/SIGTERM/
// SIGHUP/SIGPIPE (temp_registry.h) removes the temporary and leaves whatever
// was at the final path untouched; SIGKILL can leave the temporary, which the
// next Create() in that folder removes (stale_temps.h). Create() is where an unwritable path is
// found, so commands create their outputs before the work starts.
//
// Paths that cannot be renamed over are written in place: "-" (standard
// output) and existing non-regular files (/dev/null, /dev/full, a FIFO, a
// terminal). A symbolic link is followed: the file it names is replaced and
// the link kept. Every write is checked; the first failure is kept and
// reported by Write()/Commit() as "cannot write PATH: REASON".
#ifndef HBMSIM_TRACE_IO_OUTPUT_FILE_H_
#define HBMSIM_TRACE_IO_OUTPUT_FILE_H_

#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hbmsim::trace::io {

// A streambuf over a file descriptor that remembers the first failed write
// (errno) instead of hiding it in a stream state bit.
class FdStreamBuf : public std::streambuf {
 public:
  explicit FdStreamBuf(int fd);
  // Writes the buffered bytes; false (and error() set) on failure.
  bool Drain();
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override;
  int sync() override { return Drain() ? 0 : -1; }
  std::streamsize xsputn(const char* s, std::streamsize n) override;

 private:
  bool WriteAll(const char* data, size_t n);

  int fd_;
  int error_ = 0;
  char buffer_[1 << 16];
};

class OutputFile {
 public:
  // Opens the temporary (or the in-place target). Errors: "cannot write PATH: REASON".
  static absl::StatusOr<std::unique_ptr<OutputFile>> Create(const std::string& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // The stream the writers use; its errors surface in Write()/Commit().
  std::ostream& stream() { return stream_; }
  // Appends bytes; an error once a write failed.
  absl::Status Write(std::string_view bytes);
  // An error once a write failed (for a writer's failure: was it the disk?).
  absl::Status status() const;
  // Writes what is buffered, fsyncs and closes, without the rename: an error
  // here (a full disk) removes the temporary. Commit() calls it if needed.
  absl::Status Finish();
  // Makes the file complete at its path (see above). Call at most once.
  absl::Status Commit();
  // Removes the temporary now (the destructor does it too).
  void Discard();

  const std::string& path() const { return path_; }

 private:
  OutputFile(std::string path, std::string target, std::string temp, int fd, bool owns_fd);
  absl::Status Error(int err) const;

  std::string path_;    // as the user gave it
  std::string target_;  // where the rename goes (symbolic links resolved)
  std::string temp_;    // empty when written in place
  int fd_;
  bool owns_fd_;
  int temp_slot_ = -1;
  bool finished_ = false;  // flushed and closed, not renamed yet
  bool done_ = false;      // committed or discarded
  FdStreamBuf buf_;
  std::ostream stream_;
};

// Writes `text` to standard output and flushes it: "cannot write standard
// output: REASON" when that fails (`> /dev/full`, a closed pipe).
absl::Status WriteStdout(std::string_view text);

// While one is alive, WriteStdout on this thread appends to `*sink` instead:
// the Python module runs a command in-process and keeps what it printed, and
// commands in other threads are unaffected.
class ScopedStdoutCapture {
 public:
  explicit ScopedStdoutCapture(std::string* sink);
  ~ScopedStdoutCapture();
  ScopedStdoutCapture(const ScopedStdoutCapture&) = delete;
  ScopedStdoutCapture& operator=(const ScopedStdoutCapture&) = delete;

 private:
  std::string* previous_;
};

}  // namespace hbmsim::trace::io

#endif  // HBMSIM_TRACE_IO_OUTPUT_FILE_H_
