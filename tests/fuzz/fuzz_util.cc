#include "tests/fuzz/fuzz_util.h"

#include <cstdio>
#include <cstdlib>

#include "fmt/format.h"
#include "sim/all_layers.h"
#include "trace/core/validator.h"

namespace hbmsim::fuzz {
namespace {

// Sums the bytes so the compiler cannot drop the reads.
uint64_t TouchBytes(std::string_view s) {
  uint64_t sum = 0;
  for (char c : s) sum += static_cast<unsigned char>(c);
  return sum;
}

// Function-local, so it exists before the first entry registers, whatever
// the order of the objects' static initialisation.
std::vector<Entry>& MutableEntries() {
  static std::vector<Entry>* entries = new std::vector<Entry>();
  return *entries;
}

}  // namespace

const std::vector<Entry>& Entries() { return MutableEntries(); }

bool RegisterEntry(const Entry& entry) {
  MutableEntries().push_back(entry);
  return true;
}

std::string AsString(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

void Fail(std::string_view what) {
  std::fprintf(stderr, "fuzz oracle: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

void CheckErrorMessage(const absl::Status& status, std::string_view name) {
  const std::string message(status.message());
  if (message.substr(0, name.size()) != name) {
    Fail(fmt::format("error does not start with the input's name '{}': {}", name, message));
  }
}

uint64_t DrainReader(EventReader& reader, std::string_view name, AfterError after_error, uint64_t max_calls) {
  TraceValidator oracle;
  volatile uint64_t touched = TouchBytes(reader.Location());
  uint64_t events = 0;
  for (uint64_t call = 0; call < max_calls; ++call) {
    Event e;
    absl::StatusOr<bool> more = reader.Next(e);
    if (!more.ok()) {
      CheckErrorMessage(more.status(), name);
      if (after_error == AfterError::kStop) return events;
      continue;
    }
    if (!*more) return events;
    ++events;
    touched = touched + TouchBytes(e.tag) + TouchBytes(e.label);
    if (absl::Status s = oracle.Check(e); !s.ok()) {
      Fail(fmt::format("{}: reader returned an event the validator rejects: {}", reader.Location(),
                       std::string(s.message())));
    }
  }
  Fail(fmt::format("{}: no end after {} calls of Next()", name, max_calls));
}

}  // namespace hbmsim::fuzz
