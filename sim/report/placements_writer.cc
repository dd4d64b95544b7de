#include "sim/report/placements_writer.h"

#include <cerrno>
#include <cstring>

#include "fmt/format.h"

namespace hbmsim {

absl::StatusOr<std::unique_ptr<PlacementsWriter>> PlacementsWriter::Open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    return absl::InvalidArgumentError(
        fmt::format("--placements {}: cannot create: {}", path, std::strerror(errno)));
  }
  fmt::print(f, "event,id,requested,status,offset,size\n");
  return std::unique_ptr<PlacementsWriter>(new PlacementsWriter(f, path));
}

PlacementsWriter::~PlacementsWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void PlacementsWriter::OnAlloc(EventIndex index, const Event& e, const AllocResult& r) {
  // fmt::print formats into a stack buffer: no heap allocation per row.
  if (r.ok() && r.has_offset) {
    fmt::print(file_, "{},{},{},ok,{},{}\n", index.value(), e.id, e.bytes.value(), r.offset.value(),
               r.size.value());
  } else {
    fmt::print(file_, "{},{},{},{},,{}\n", index.value(), e.id, e.bytes.value(), AllocStatusName(r.status),
               r.ok() ? r.size.value() : 0);
  }
}

absl::Status PlacementsWriter::Finish() {
  const bool failed = std::ferror(file_) != 0;
  const bool close_failed = std::fclose(file_) != 0;
  file_ = nullptr;
  if (failed || close_failed)
    return absl::InvalidArgumentError(fmt::format("--placements {}: write failed", path_));
  return absl::OkStatus();
}

}  // namespace hbmsim
