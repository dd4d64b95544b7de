// --placements OUT.csv: one row per alloc event, in trace order, streamed while
// the replay runs (nothing is kept in memory). Columns, per the CLI contract:
//
//   event,id,requested,status,offset,size
//   0,1,1000,ok,0,1024
//   5,6,3000,fragmentation,,0
//
// offset is empty when nothing was placed (a failure, or a zero-byte request
// that reserved nothing); size is 0 then.
#ifndef HBMSIM_SIM_REPORT_PLACEMENTS_WRITER_H_
#define HBMSIM_SIM_REPORT_PLACEMENTS_WRITER_H_

#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "sim/engine/replay_observer.h"

namespace hbmsim {

class PlacementsWriter : public ReplayObserver {
 public:
  // Creates (truncates) `path` and writes the header.
  static absl::StatusOr<std::unique_ptr<PlacementsWriter>> Open(const std::string& path);
  ~PlacementsWriter() override;

  void OnAlloc(EventIndex index, const Event& e, const AllocResult& r) override;
  // Flushes and closes; an I/O error names the file.
  absl::Status Finish();

 private:
  PlacementsWriter(std::FILE* f, std::string path) : file_(f), path_(std::move(path)) {}
  std::FILE* file_;
  std::string path_;
};

}  // namespace hbmsim

#endif  // HBMSIM_SIM_REPORT_PLACEMENTS_WRITER_H_
