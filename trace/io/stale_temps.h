// Temporaries a killed run left behind. OutputFile writes NAME through a
// hidden `.NAME.hbmsim-PID-XXXXXX` beside it; SIGKILL (or a power cut) runs no
// cleanup, so such a file, up to the size of the whole output, would stay
// forever. The next OutputFile created in that folder removes them, and only
// those that are certainly ours and dead:
//
//   - the name has our exact pattern, with the writer's pid in it (older
//     `.NAME.hbmsim-XXXXXX` files without a pid are left alone: nothing says
//     whether their writer is gone);
//   - it is a regular file owned by the effective user;
//   - no process has that pid (kill(pid, 0) says ESRCH) -- a pid the kernel
//     reused for another process only delays the removal;
//   - and no writer holds the flock() every OutputFile keeps on its
//     temporary, which protects a live writer on another host sharing the
//     folder (where the pid means nothing).
#ifndef HBMSIM_TRACE_IO_STALE_TEMPS_H_
#define HBMSIM_TRACE_IO_STALE_TEMPS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

namespace hbmsim::trace::io {

// The mkostemp() template for a temporary of `base` in `dir`, naming this process.
std::string TempFileTemplate(const std::string& dir, const std::string& base);

// The writer's pid when `name` (a file name, no folder) is one of our
// temporaries, `.NAME.hbmsim-PID-XXXXXX`.
std::optional<pid_t> TempFileWriter(std::string_view name);

// Removes the stale temporaries in `dir` (see above); returns how many. Never
// fails: a folder it cannot list or a file it cannot remove is left as it is.
int RemoveStaleTempFiles(const std::string& dir);

}  // namespace hbmsim::trace::io

#endif  // HBMSIM_TRACE_IO_STALE_TEMPS_H_
