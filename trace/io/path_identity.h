// "No input is ever an output": before any work, a command hands every input
// and every output it was given to CheckOutputsAreNotInputs(). Two names are
// the same file when stat() gives the same device and inode, so symbolic
// links, hard links, "./a" vs "a", /dev/stdin (a link to what fd 0 is) and
// `-` (fd 0 for an input, fd 1 for an output) are all caught. Standard output
// is always checked too: `hbmsim convert t.hbt - >> t.hbt` is refused.
//
// Only regular files are compared: writing to /dev/null or a terminal that
// is also read from loses nothing. An output that does not exist yet cannot
// be an input; two outputs naming one file are refused as well (the second
// rename would silently replace the first).
#ifndef HBMSIM_TRACE_IO_PATH_IDENTITY_H_
#define HBMSIM_TRACE_IO_PATH_IDENTITY_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace hbmsim::trace::io {

// A path and what it is for the user ("TRACE", "--json", "OUT").
struct NamedPath {
  std::string role;
  std::string path;
};

// InvalidArgument naming both when an output is an input (or another output):
// "--json a.trace is the input TRACE a.trace; refusing to overwrite it".
// Empty paths are ignored (an output that was not asked for).
absl::Status CheckOutputsAreNotInputs(const std::vector<NamedPath>& inputs,
                                      const std::vector<NamedPath>& outputs);

}  // namespace hbmsim::trace::io

#endif  // HBMSIM_TRACE_IO_PATH_IDENTITY_H_
