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
#include <vector>

#include "absl/status/status.h"
#include "sim/all_layers.h"
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

// One fuzz target's entry: what libFuzzer calls LLVMFuzzerTestOneInput.
// Each fuzz_<name>.cc defines its own as
//   HBMSIM_FUZZ_ENTRY(<name>, <Suite>FuzzCorpus) { ...; return 0; }
// which names it HbmsimFuzzEntry_<name> and lists it in Entries(). Giving
// every entry a name of its own lets all of them link into one program: the
// corpus replay test (corpus_replay_test.cc) compiles and links once instead
// of once per target, and each libFuzzer program (fuzz_main.cc) calls its one
// entry as its LLVMFuzzerTestOneInput.
using EntryFunction = int (*)(const uint8_t* data, size_t size);
struct Entry {
  const char* name;   // the corpus folder, tests/fuzz/corpus/<name>/
  const char* suite;  // the gtest suite that replays that corpus
  EntryFunction run;
};

// Every entry linked into this program, in the order they registered (the
// order of static initialisation, which the caller must not rely on).
const std::vector<Entry>& Entries();
bool RegisterEntry(const Entry& entry);

}  // namespace hbmsim::fuzz

#define HBMSIM_FUZZ_ENTRY(name, suite)                                                  \
  extern "C" int HbmsimFuzzEntry_##name(const uint8_t* data, size_t size);             \
  [[maybe_unused]] static const bool hbmsim_fuzz_entry_registered_##name =             \
      ::hbmsim::fuzz::RegisterEntry({#name, #suite, &HbmsimFuzzEntry_##name});         \
  extern "C" int HbmsimFuzzEntry_##name(const uint8_t* data, size_t size)

#endif  // HBMSIM_TESTS_FUZZ_FUZZ_UTIL_H_
