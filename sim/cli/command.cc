#include "sim/cli/command.h"

#include <algorithm>

#include "fmt/format.h"
#include "sim/layer.h"
#include "trace/core/numbers.h"

namespace hbmsim::sim::cli {
namespace {

// A function-local static: safe to use from other files' static initializers.
std::vector<CommandInfo>& Registry() {
  static std::vector<CommandInfo> registry;
  return registry;
}

// Per thread: the Python module may run commands in parallel threads.
std::vector<std::string>& HeldNotes() {
  thread_local std::vector<std::string> notes;
  return notes;
}

thread_local std::string* t_error_capture = nullptr;

}  // namespace

CLI::Validator UnsignedNumber() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        absl::StatusOr<uint64_t> v = ParseU64(text);
        return v.ok() ? std::string() : std::string(v.status().message());
      },
      "UINT");
}

CommandFailure FailureFromStatus(const absl::Status& s) {
  const bool internal = s.code() == absl::StatusCode::kInternal;
  return {internal ? kExitInternal : kExitBadInput,
          fmt::format("{}{}", internal ? "internal error: " : "", std::string(s.message()))};
}

CommandFailure BadInput(const absl::Status& s) { return {kExitBadInput, std::string(s.message())}; }

void Note(std::string line) { HeldNotes().push_back(OneLineMessage(line)); }

void FlushNotes(int exit_code) {
  if (exit_code == kExitOk || exit_code == kExitFailures) {
    for (const std::string& line : HeldNotes()) PrintError(line);
  }
  HeldNotes().clear();
}

void PrintError(std::string_view line) {
  if (t_error_capture != nullptr) {
    t_error_capture->append(line);
    t_error_capture->push_back('\n');
    return;
  }
  fmt::print(stderr, "{}\n", line);
}

ScopedErrorCapture::ScopedErrorCapture(std::string* sink) : previous_(t_error_capture) { t_error_capture = sink; }

ScopedErrorCapture::~ScopedErrorCapture() { t_error_capture = previous_; }

CommandRegistration::CommandRegistration(std::string name, std::string summary,
                                         std::unique_ptr<Command> (*make)()) {
  Registry().push_back({std::move(name), std::move(summary), make});
}

std::string OneLineMessage(std::string_view message) {
  std::string out;
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::vector<CommandInfo> RegisteredCommands() {
  std::vector<CommandInfo> out = Registry();
  std::sort(out.begin(), out.end(),
            [](const CommandInfo& a, const CommandInfo& b) { return a.name < b.name; });
  return out;
}

}  // namespace hbmsim::sim::cli
