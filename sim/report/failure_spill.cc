#include "sim/report/failure_spill.h"

#include <iterator>

#include "fmt/format.h"

namespace hbmsim {
namespace {

// A value no report field can hold unescaped, so it is found only where it was put.
constexpr std::string_view kPlaceholder = "\"@@hbmsim failures spilled here@@\"";
constexpr std::string_view kKeyLine = "\n  \"failures\": ";

}  // namespace

void FailureSpill::OnFailure(const FailureRecord& f) {
  buffer_.clear();
  auto out = std::back_inserter(buffer_);
  // The separator before every element but the first, then the element at depth two.
  fmt::format_to(out,
                 "{}    {{\n"
                 "      \"event\": {},\n"
                 "      \"id\": {},\n"
                 "      \"requested\": {},\n"
                 "      \"rounded\": {},\n"
                 "      \"kind\": \"{}\",\n"
                 "      \"free_bytes\": {},\n"
                 "      \"largest_free_block_bytes\": {}",
                 count_ == 0 ? "" : ",\n", f.event.value(), f.id, f.requested.value(), f.rounded.value(),
                 AllocStatusName(f.kind), f.free_bytes.value(), f.largest_free_block_bytes.value());
  if (f.event_kind != EventKind::kAlloc) fmt::format_to(out, ",\n      \"event_kind\": \"{}\"", EventKindName(f.event_kind));
  if (!last_mark_.empty()) {
    fmt::format_to(out, ",\n      \"after_mark\": {}", nlohmann::ordered_json(last_mark_).dump());
  }
  buffer_ += "\n    }";
  file_->Append(buffer_);
  ++count_;
}

absl::Status WriteJsonReport(nlohmann::ordered_json report, FailureSpill* spill, io::OutputFile& out) {
  if (spill == nullptr) return out.Write(report.dump(2) + "\n");
  report["failures"] = std::string(kPlaceholder.substr(1, kPlaceholder.size() - 2));
  const std::string text = report.dump(2) + "\n";
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

}  // namespace hbmsim
