#include "sim/report/failure_spill.h"

#include "sim/layer.h"
#include "sim/report/replay_report.h"
#include "trace/core/json_text.h"

namespace hbmsim::sim {
namespace {

// A value no report field holds unescaped, so it is found only where it was put.
constexpr std::string_view kPlaceholder = "\"@@hbmsim failures spilled here@@\"";
constexpr std::string_view kKeyLine = "\n  \"failures\": ";
constexpr std::string_view kElementIndent = "    ";  // an element of a top-level array in dump(2)

}  // namespace

void FailureSpill::Add(const FailureRecord& f, const FailureLabels& labels, const std::string& mark_before) {
  const std::string object = JsonText(FailureJson(f, labels, mark_before), 2);
  element_.assign(count_ == 0 ? "" : ",\n");
  element_ += kElementIndent;
  for (const char c : object) {  // every line of the object one level deeper
    element_ += c;
    if (c == '\n') element_ += kElementIndent;
  }
  file_->Append(element_);
  ++count_;
}

absl::Status WriteJsonReport(nlohmann::ordered_json report, FailureSpill* spill, io::OutputFile& out) {
  if (spill == nullptr) return out.Write(JsonText(report, 2) + "\n");
  report["failures"] = std::string(kPlaceholder.substr(1, kPlaceholder.size() - 2));
  const std::string text = JsonText(report, 2) + "\n";
  const std::string marker = std::string(kKeyLine) + std::string(kPlaceholder);
  const size_t at = text.find(marker);
  if (at == std::string::npos) return absl::InternalError("--json: the failures placeholder is missing");
  const size_t value_at = at + kKeyLine.size();
  if (absl::Status s = out.Write(std::string_view(text).substr(0, value_at)); !s.ok()) return s;
  if (spill->count() == 0) {
    if (absl::Status s = out.Write("[]"); !s.ok()) return s;
  } else {
    if (absl::Status s = out.Write("[\n"); !s.ok()) return s;
    if (absl::Status s = spill->file().CopyTo(out); !s.ok()) return s;
    if (absl::Status s = out.Write("\n  ]"); !s.ok()) return s;
  }
  return out.Write(std::string_view(text).substr(value_at + kPlaceholder.size()));
}

}  // namespace hbmsim::sim
