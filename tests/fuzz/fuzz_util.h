// What every fuzz target in this folder shares: draining a reader to its end
// with an independent validator as the oracle, and a loud failure that
// libFuzzer (and the corpus replay test) records as a crash.
//
// The oracle: a reader may reject input, but an event it hands out must obey
// the trace rules (trace/core/validator.h). A second TraceValidator fed the
// same events must accept each one; if it does not, the reader let through
// something the replay engine is entitled to assume never happens.
#ifndef HBMSIM_TESTS_FUZZ_FUZZ_UTIL_H_
#define HBMSIM_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "trace/core/reader.h"

namespace hbmsim::fuzz {

// The input as a string (readers own their bytes).
std::string AsString(const uint8_t* data, size_t size);

// Prints `what` and aborts: the fuzzer saves the input, the replay test dies.
[[noreturn]] void Fail(std::string_view what);

// A reader's error must start with `name` (the location contract of
// docs/contributing.md). It may quote input bytes, newlines included: the CLI
// escapes control characters when it prints the one-line message.
void CheckErrorMessage(const absl::Status& status, std::string_view name);

enum class AfterError : uint8_t {
  kStop,      // the reader's errors are final (binary, snapshots, RMM)
  kContinue,  // the reader skips the bad line and goes on (text, --lenient)
};

// Calls Next() until the end, checking every event against its own
// TraceValidator and reading every byte its string views point at (so a
// dangling view is an ASan report). Stops after `max_calls` calls, which the
// caller sets from the input size: a reader that never ends is a finding.
// Returns the number of events read.
uint64_t DrainReader(EventReader& reader, std::string_view name, AfterError after_error, uint64_t max_calls);

}  // namespace hbmsim::fuzz

#endif  // HBMSIM_TESTS_FUZZ_FUZZ_UTIL_H_
