#include "trace/text/text_writer.h"

#include <iterator>

#include "trace/text/field_rules.h"

namespace hbmsim::trace {
namespace {

constexpr size_t kFlushBytes = size_t{1} << 16;

absl::Status WriteError(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

void AppendAttributes(const Event& e, fmt::memory_buffer& out) {
  auto it = std::back_inserter(out);
  if (e.time_us.has_value()) fmt::format_to(it, " t={}", *e.time_us);
  if (e.stream.value() != 0) fmt::format_to(it, " stream={}", e.stream.value());
  if (!e.tag.empty()) fmt::format_to(it, " tag={}", e.tag);
  if (e.shape.has_value()) fmt::format_to(it, " shape={}", FormatShape(*e.shape));
  if (e.addr.has_value()) fmt::format_to(it, " addr={:#x}", *e.addr);
  if (e.device.value() != 0) fmt::format_to(it, " device={}", e.device.value());
  if (!e.attrs.empty()) fmt::format_to(it, " {}", e.attrs);  // open attributes, as read
}

}  // namespace

absl::Status TextTraceWriter::FormatEvent(const Event& e, fmt::memory_buffer& out) {
  if (absl::Status s = CheckAttributePlaces(e); !s.ok()) return s;
  if (!e.tag.empty()) {
    if (absl::Status s = CheckTextField("tag", e.tag); !s.ok()) return s;
  }
  if (absl::Status s = CheckOtherAttributes(e.attrs); !s.ok()) return s;
  auto it = std::back_inserter(out);
  if (e.kind == EventKind::kMark) {
    if (e.label.empty()) return WriteError("a mark without a label, which a trace cannot hold");
    if (absl::Status s = CheckTextField("mark label", e.label); !s.ok()) return s;
    fmt::format_to(it, "mark {}", e.label);
  } else {
    fmt::format_to(it, "{} {}", EventKindName(e.kind), e.id);
    if (HasBytesField(e.kind)) fmt::format_to(it, " {}", e.bytes.value());
  }
  AppendAttributes(e, out);
  return absl::OkStatus();
}

absl::Status TextTraceWriter::WriteHeader(const TraceMetadata& metadata) {
  if (header_written_) return WriteError("the trace header must be written once, before any event");
  for (const auto& [key, value] : metadata.entries) {
    if (absl::Status s = CheckMetadataEntry(key, value); !s.ok()) return s;
  }
  header_written_ = true;
  auto it = std::back_inserter(buf_);
  fmt::format_to(it, "# hbmsim-trace v1\n");
  for (const auto& [key, value] : metadata.entries) {
    const std::string_view trimmed = TrimBlanks(value);
    // No trailing blank after an empty value: the canonical form has none.
    fmt::format_to(it, "# {}:{}{}\n", key, trimmed.empty() ? "" : " ", trimmed);
  }
  return FlushIfFull();
}

absl::Status TextTraceWriter::Write(const Event& e) {
  if (!header_written_) {
    if (absl::Status s = WriteHeader(TraceMetadata{}); !s.ok()) return s;
  }
  const size_t before = buf_.size();
  if (absl::Status s = FormatEvent(e, buf_); !s.ok()) {
    buf_.resize(before);  // nothing of a refused event reaches the output
    return s;
  }
  buf_.push_back('\n');
  return FlushIfFull();
}

absl::Status TextTraceWriter::FlushIfFull() {
  return buf_.size() >= kFlushBytes ? Flush() : absl::OkStatus();
}

absl::Status TextTraceWriter::Flush() {
  if (buf_.size() > 0) {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }
  out_.flush();
  if (!out_) return WriteError("write error");
  return absl::OkStatus();
}

}  // namespace hbmsim::trace
