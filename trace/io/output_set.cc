#include "trace/io/output_set.h"

#include "fmt/format.h"

namespace hbmsim::trace::io {

absl::Status WithRole(std::string_view role, const absl::Status& status) {
  if (status.ok()) return status;
  const std::string message(status.message());
  if (message.starts_with(role)) return status;
  return absl::Status(status.code(), fmt::format("{}: {}", role, message));
}

absl::StatusOr<OutputSet> OutputSet::Open(const std::vector<NamedPath>& inputs,
                                          const std::vector<NamedPath>& outputs) {
  if (absl::Status s = CheckOutputsAreNotInputs(inputs, outputs); !s.ok()) return s;
  OutputSet set;
  for (const NamedPath& out : outputs) {
    if (out.path.empty()) continue;
    absl::StatusOr<std::unique_ptr<OutputFile>> file = OutputFile::Create(out.path);
    if (!file.ok()) return WithRole(out.role, file.status());
    set.entries_.push_back({out.role, *std::move(file)});
  }
  return set;
}

OutputFile* OutputSet::Get(std::string_view role) const {
  for (const Entry& e : entries_) {
    if (e.role == role) return e.file.get();
  }
  return nullptr;
}

void OutputSet::Drop(std::string_view role) {
  std::erase_if(entries_, [&](const Entry& e) { return e.role == role; });  // the destructor removes the temporary
}

absl::Status OutputSet::Write(std::string_view role, std::string_view bytes) const {
  OutputFile* file = Get(role);
  if (file == nullptr) return absl::OkStatus();
  return WithRole(role, file->Write(bytes));
}

absl::Status OutputSet::CommitAll() {
  // Every file is flushed first: a disk that fills up on the last one leaves
  // none of them in place, not the first ones.
  for (Entry& e : entries_) {
    if (absl::Status s = e.file->Finish(); !s.ok()) {
      entries_.clear();
      return WithRole(e.role, s);
    }
  }
  for (Entry& e : entries_) {
    if (absl::Status s = e.file->Commit(); !s.ok()) {
      entries_.clear();  // the rest are removed, never half kept
      return WithRole(e.role, s);
    }
  }
  entries_.clear();
  return absl::OkStatus();
}

}  // namespace hbmsim::trace::io
