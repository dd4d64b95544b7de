// libFuzzer target: a TF/JAX profile (trace/xplane), either form chosen by
// content as OpenTrace does: an XSpace protobuf (ParseXSpace) or XProf's
// memory_profile JSON, gzip or plain (ParseMemoryProfile); then, for the
// JSON, the reconciliation of a sampled profile's lost events (sampled.h),
// the start state inference (top-down devices and the region sizes the
// fragmentation readings choose included) and the events (BuildProfileTrace),
// read to the end, with each record's figures.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "tests/fuzz/fuzz_util.h"
#include "trace/xplane/memory_profile_json.h"
#include "trace/xplane/profile_trace.h"
#include "trace/xplane/xspace_reader.h"

HBMSIM_FUZZ_ENTRY(xplane, XplaneFuzzCorpus) {
  using namespace hbmsim;
  const std::string name = "fuzz.xplane.pb";
  const std::string bytes = fuzz::AsString(data, size);
  absl::StatusOr<xplane::Profile> profile =
      xplane::LooksLikeMemoryProfileJson(std::string_view(bytes).substr(0, 4096))
          ? xplane::ParseMemoryProfile(bytes, name)
          : xplane::ParseXSpace(bytes, name);
  if (!profile.ok()) {
    fuzz::CheckErrorMessage(profile.status(), name);
    return 0;
  }
  absl::StatusOr<xplane::ProfileTrace> trace = xplane::BuildProfileTrace(*std::move(profile));
  if (!trace.ok()) {
    if (trace.status().code() == absl::StatusCode::kInternal)
      fuzz::Fail(std::string(trace.status().message()));
    fuzz::CheckErrorMessage(trace.status(), name);
    return 0;
  }
  const uint64_t events = trace->events.size();
  // Every record's figures (what --check-recorded compares) name where the record is.
  xplane::ProfileEventReader figures(*trace);
  Event e;
  while (figures.Next(e).value_or(false)) {
    const std::optional<RecordedFigures> f = figures.current_figures();
    if (f && f->where.empty()) fuzz::Fail("figures without the record's place");
  }
  xplane::ProfileEventReader reader(*std::move(trace));
  fuzz::DrainReader(reader, name, fuzz::AfterError::kStop, events + 2);
  return 0;
}
