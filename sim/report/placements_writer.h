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

#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sim/engine/replay_observer.h"
#include "sim/layer.h"
#include "trace/io/output_file.h"

namespace hbmsim::sim {

class PlacementsWriter : public ReplayObserver {
 public:
  // Writes the header to `out` (an atomic output the command created before
  // the replay and commits after it: a killed replay leaves no cut CSV).
  explicit PlacementsWriter(io::OutputFile& out);

  void OnAlloc(EventIndex index, const Event& e, const AllocResult& r) override;
  // Writes what is buffered; the first write error ("cannot write PATH: REASON").
  absl::Status Finish();

 private:
  void FlushIfFull();

  io::OutputFile& out_;
  fmt::memory_buffer rows_;  // written in 64 KiB pieces
  absl::Status status_;      // the first failed write; later rows are dropped
};

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_REPORT_PLACEMENTS_WRITER_H_
