// Helpers shared by the trace tests: fixture paths and reading whole traces.
#ifndef HBMSIM_TESTS_TRACE_TRACE_TEST_UTIL_H_
#define HBMSIM_TESTS_TRACE_TRACE_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/all_layers.h"
#include "trace/core/event.h"
#include "trace/core/reader.h"
#include "trace/text/text_reader.h"

namespace hbmsim::testing {

inline std::string TraceFixture(const std::string& name) {
  return std::string(HBMSIM_SOURCE_DIR) + "/tests/data/traces/" + name;
}

// Every event of `reader`, owned, or the first error.
inline absl::StatusOr<std::vector<OwnedEvent>> ReadAll(EventReader& reader) {
  std::vector<OwnedEvent> events;
  Event e;
  while (true) {
    absl::StatusOr<bool> got = reader.Next(e);
    if (!got.ok()) return got.status();
    if (!*got) return events;
    events.push_back(OwnedEvent::Own(e));
  }
}

// The message of the first error met while opening and reading `text`, or
// "no error".
inline std::string FirstErrorOfText(std::string text) {
  absl::StatusOr<std::unique_ptr<TextTraceReader>> reader = TextTraceReader::FromString(std::move(text));
  if (!reader.ok()) return std::string(reader.status().message());
  absl::StatusOr<std::vector<OwnedEvent>> events = ReadAll(**reader);
  return events.ok() ? "no error" : std::string(events.status().message());
}

// The same for a fixture file; `path` receives the path messages start with.
inline std::string FirstErrorOfFixture(const std::string& name, std::string& path) {
  path = TraceFixture(name);
  absl::StatusOr<std::unique_ptr<TextTraceReader>> reader = TextTraceReader::Open(path);
  if (!reader.ok()) return std::string(reader.status().message());
  absl::StatusOr<std::vector<OwnedEvent>> events = ReadAll(**reader);
  return events.ok() ? "no error" : std::string(events.status().message());
}

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_TRACE_TRACE_TEST_UTIL_H_
