// An anonymous scratch file for output that is too big to hold in memory
// until the end (one JSON object per failed allocation, millions of them):
// appended to while the work runs, then copied into the final output.
// It is created with O_TMPFILE (or created and unlinked at once), so nothing
// is ever left behind, not even after SIGKILL. Put it next to the output it
// feeds: the final file needs that file system's space anyway, and /tmp may
// be RAM.
#ifndef HBMSIM_TRACE_IO_SPILL_FILE_H_
#define HBMSIM_TRACE_IO_SPILL_FILE_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "trace/io/output_file.h"

namespace hbmsim::trace::io {

class SpillFile {
 public:
  // In `dir` ("" or unusable: $TMPDIR, else /tmp). Errors: "cannot create a
  // scratch file in DIR: REASON".
  static absl::StatusOr<std::unique_ptr<SpillFile>> Create(const std::string& dir);
  ~SpillFile();
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;

  // Buffered; a failed write is kept and reported by CopyTo().
  void Append(std::string_view bytes) { stream_.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); }
  // Writes everything appended so far to `out`.
  absl::Status CopyTo(OutputFile& out);

 private:
  SpillFile(int fd, std::string dir) : fd_(fd), dir_(std::move(dir)), buf_(fd), stream_(&buf_) {}

  int fd_;
  std::string dir_;
  FdStreamBuf buf_;
  std::ostream stream_;
};

// The directory `path` is in ("." for a bare name).
std::string DirectoryOf(const std::string& path);

}  // namespace hbmsim::trace::io

#endif  // HBMSIM_TRACE_IO_SPILL_FILE_H_
