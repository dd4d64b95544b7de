// Recordings held in memory under a name instead of in a file. The Python
// module converts the dict torch.cuda.memory._snapshot() returns straight
// into a PickleTree (python/snapshot_tree.cc), registers it here and passes
// the name where the command line takes a recording path; OpenRecording
// (format_table.h) looks names up here before the file system, so the one
// pipeline (Scenario, the reports) runs on it with no pickle round trip and
// no temporary file (issue 19).
//
// Names are "hbmsim-memory:<n>", which no file of a run is called; messages
// and reports carry the name, and the Python side shows it as the user gave
// the recording ("<recording snapshot>").
#ifndef HBMSIM_TRACE_FORMATS_MEMORY_RECORDINGS_H_
#define HBMSIM_TRACE_FORMATS_MEMORY_RECORDINGS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "trace/pickle/pickle_tree.h"

namespace hbmsim::trace {

// A fresh name; the tree registered under it should carry it as its
// file_name(), so its messages name it.
std::string NextMemoryRecordingName();
void RegisterMemorySnapshot(const std::string& name, PickleTree tree);
// Drops the entry; a run still reading it keeps its own reference.
void ReleaseMemoryRecording(const std::string& name);
// The registered tree, or null.
std::shared_ptr<const PickleTree> FindMemorySnapshot(const std::string& name);
// How many times FindMemorySnapshot found one (tests: the direct route ran).
uint64_t MemorySnapshotOpens();

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_FORMATS_MEMORY_RECORDINGS_H_
