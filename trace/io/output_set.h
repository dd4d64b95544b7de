// The outputs of one command run, opened together before the work starts:
// CheckOutputsAreNotInputs() first, then an OutputFile per requested path,
// so an unwritable `--json nodir/x.json` or `--html INPUT` costs no replay.
// Committed together at the end; anything not committed is removed when the
// set is destroyed (an error, an early return), never left half written.
#ifndef HBMSIM_TRACE_IO_OUTPUT_SET_H_
#define HBMSIM_TRACE_IO_OUTPUT_SET_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "trace/io/output_file.h"
#include "trace/io/path_identity.h"

namespace hbmsim::trace::io {

class OutputSet {
 public:
  OutputSet() = default;
  OutputSet(OutputSet&&) = default;
  OutputSet& operator=(OutputSet&&) = default;

  // Outputs with an empty path were not asked for and are skipped. Errors
  // name the role: "--json: cannot write nodir/x.json: No such file or directory".
  static absl::StatusOr<OutputSet> Open(const std::vector<NamedPath>& inputs,
                                        const std::vector<NamedPath>& outputs);

  // The file for `role`, or nullptr when it was not asked for.
  OutputFile* Get(std::string_view role) const;
  // Appends `bytes` to the file for `role` (nothing when it was not asked
  // for); errors name the role: "--json: cannot write r.json: REASON".
  absl::Status Write(std::string_view role, std::string_view bytes) const;
  // Removes the file for `role` (its temporary goes): an output the run
  // turned out to have nothing for is not written at all, never left empty.
  void Drop(std::string_view role);
  // Flushes every file, then renames them into place in the order given.
  // The first error wins and every file not yet renamed is removed; only a
  // failing rename (rare: the folders were writable at Open) can leave the
  // files before it in place.
  absl::Status CommitAll();

 private:
  struct Entry {
    std::string role;
    std::unique_ptr<OutputFile> file;
  };
  std::vector<Entry> entries_;
};

// "ROLE: MESSAGE" for an output's error; the message alone when it already starts with ROLE.
absl::Status WithRole(std::string_view role, const absl::Status& status);

}  // namespace hbmsim::trace::io

#endif  // HBMSIM_TRACE_IO_OUTPUT_SET_H_
