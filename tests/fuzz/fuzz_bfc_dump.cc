// libFuzzer target: `hbmsim diagnose` without the CLI: parse a log of BFC OOM
// dumps (trace/bfc_dump), rebuild each heap, run its consistency checks,
// diagnose it and render both reports.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_util.h"
#include "trace/bfc_dump/diagnosis.h"
#include "trace/bfc_dump/heap.h"
#include "trace/bfc_dump/parser.h"
#include "trace/bfc_dump/render.h"

HBMSIM_FUZZ_ENTRY(bfc_dump, BfcDumpFuzzCorpus) {
  using namespace hbmsim::trace::bfc_dump;
  const std::string name = "fuzz.log";
  const std::string text = hbmsim::fuzz::AsString(data, size);
  absl::StatusOr<BfcLog> log = ParseBfcLog(text, name);
  if (!log.ok()) {
    hbmsim::fuzz::CheckErrorMessage(log.status(), name);
    return 0;
  }
  for (const BfcDump& dump : log->dumps) {
    (void)ChunkListGaps(dump);
    Heap heap = RebuildHeap(dump);
    (void)CheckConsistency(dump, heap);
    (void)FreeChunkHistogram(dump);
  }
  std::vector<Diagnosis> diagnoses = DiagnoseAll(*log);
  volatile size_t rendered = RenderDiagnoseText(*log, diagnoses).size() + RenderDiagnoseJson(*log, diagnoses).size();
  (void)rendered;
  return 0;
}
