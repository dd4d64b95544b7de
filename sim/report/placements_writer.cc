#include "sim/report/placements_writer.h"

#include <iterator>
#include <string_view>

namespace hbmsim::sim {
namespace {

constexpr size_t kFlushBytes = size_t{1} << 16;

}  // namespace

PlacementsWriter::PlacementsWriter(io::OutputFile& out) : out_(out) {
  fmt::format_to(std::back_inserter(rows_), "event,id,requested,status,offset,size\n");
}

void PlacementsWriter::OnAlloc(EventIndex index, const Event& e, const AllocResult& r) {
  // Formatted into one growing buffer: no heap allocation per row.
  if (r.ok() && r.has_offset) {
    fmt::format_to(std::back_inserter(rows_), "{},{},{},ok,{},{}\n", index.value(), e.id, e.bytes.value(),
                   r.offset.value(), r.size.value());
  } else {
    fmt::format_to(std::back_inserter(rows_), "{},{},{},{},,{}\n", index.value(), e.id, e.bytes.value(),
                   AllocStatusName(r.status), r.ok() ? r.size.value() : 0);
  }
  if (rows_.size() >= kFlushBytes) FlushIfFull();
}

void PlacementsWriter::FlushIfFull() {
  if (status_.ok()) status_ = out_.Write(std::string_view(rows_.data(), rows_.size()));
  rows_.clear();
}

absl::Status PlacementsWriter::Finish() {
  FlushIfFull();
  return status_;
}

}  // namespace hbmsim::sim
