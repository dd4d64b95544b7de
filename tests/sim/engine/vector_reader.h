// An EventReader over events written in the text format's spelling, for engine
// and report tests that must not depend on the real text reader. It parses only
// what the tests use: `alloc ID BYTES [device=N] [addr=N]`, `free ID`,
// `free_requested ID`, `free_completed ID`, `program_load PID BYTES`,
// `program_run PID`, `program_unload PID`, `mark LABEL`, and `error MESSAGE`
// (Next() then fails with that message, as a reader does on bad input).
#ifndef HBMSIM_TESTS_SIM_VECTOR_READER_H_
#define HBMSIM_TESTS_SIM_VECTOR_READER_H_

#include <sstream>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "sim/all_layers.h"
#include "trace/core/reader.h"

namespace hbmsim::testing {

class VectorReader : public EventReader {
 public:
  explicit VectorReader(std::vector<std::string> lines) : lines_(std::move(lines)) {}

  absl::StatusOr<bool> Next(Event& e) override {
    if (pos_ == lines_.size()) return false;
    std::istringstream in(lines_[pos_++]);
    std::string kind;
    in >> kind;
    e = Event{};
    if (kind == "error") return absl::InvalidArgumentError(fmt::format("{}: bad line", Location()));
    static const std::vector<std::pair<std::string, EventKind>> kKinds = {
        {"alloc", EventKind::kAlloc},
        {"free", EventKind::kFree},
        {"free_requested", EventKind::kFreeRequested},
        {"free_completed", EventKind::kFreeCompleted},
        {"program_load", EventKind::kProgramLoad},
        {"program_run", EventKind::kProgramRun},
        {"program_unload", EventKind::kProgramUnload},
        {"mark", EventKind::kMark}};
    for (const auto& [name, k] : kKinds) {
      if (name == kind) e.kind = k;
    }
    if (e.kind == EventKind::kMark) {
      in >> label_;
      e.label = label_;
      return true;
    }
    in >> e.id;
    if (e.kind == EventKind::kAlloc || e.kind == EventKind::kProgramLoad) {
      uint64_t bytes = 0;
      in >> bytes;
      e.bytes = Bytes(bytes);
    }
    std::string attr;
    while (in >> attr) {
      if (attr.rfind("device=", 0) == 0) e.device = DeviceId(std::stoull(attr.substr(7)));
      if (attr.rfind("addr=", 0) == 0) e.addr = std::stoull(attr.substr(5));
    }
    return true;
  }

  const TraceMetadata& metadata() const override { return metadata_; }
  std::string Location() const override { return fmt::format("t.trace:{}", pos_); }

  TraceMetadata metadata_;

 private:
  std::vector<std::string> lines_;
  size_t pos_ = 0;
  std::string label_;
};

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_SIM_VECTOR_READER_H_
