#include "trace/text/text_writer.h"

#include <iterator>

#include "trace/text/utf8.h"

namespace hbmsim {
namespace {

constexpr size_t kFlushBytes = size_t{1} << 16;

absl::Status Error(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

bool HasBlankOrBreak(std::string_view s) {
  return s.find_first_of(std::string_view(" \t\r\n\0", 5)) != std::string_view::npos;
}

// A tag or label must survive the reader's field splitting unchanged.
absl::Status CheckField(std::string_view what, std::string_view text) {
  if (HasBlankOrBreak(text)) {
    return Error(fmt::format("cannot write {} '{}': it holds a blank, line break or NUL", what, text));
  }
  if (!IsValidUtf8(text)) return Error(fmt::format("cannot write {}: not valid UTF-8", what));
  return absl::OkStatus();
}

absl::Status CheckMetadata(std::string_view key, std::string_view value) {
  if (key.empty() || HasBlankOrBreak(key) || key.find(':') != std::string_view::npos) {
    return Error(
        fmt::format("cannot write metadata key '{}': a key is non-empty, without blanks or ':'", key));
  }
  if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos) {
    return Error(fmt::format("cannot write metadata '{}': its value holds a line break or NUL", key));
  }
  if (!IsValidUtf8(key) || !IsValidUtf8(value)) return Error("cannot write metadata: not valid UTF-8");
  return absl::OkStatus();
}

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool HasBytesField(EventKind k) { return k == EventKind::kAlloc || k == EventKind::kProgramLoad; }

// Attributes the format has no place for on this kind of event.
absl::Status CheckAttributePlaces(const Event& e) {
  const std::string_view kind = EventKindName(e.kind);
  if (e.stream.value() != 0 && !IsBufferEvent(e.kind)) {
    return Error(fmt::format("cannot write stream= on {} (only on alloc and free*)", kind));
  }
  if (!e.tag.empty() && e.kind != EventKind::kAlloc && e.kind != EventKind::kProgramLoad) {
    return Error(fmt::format("cannot write tag= on {} (only on alloc and program_load)", kind));
  }
  if ((e.shape.has_value() || e.addr.has_value()) && e.kind != EventKind::kAlloc) {
    return Error(fmt::format("cannot write shape= or addr= on {} (only on alloc)", kind));
  }
  return absl::OkStatus();
}

void AppendAttributes(const Event& e, fmt::memory_buffer& out) {
  auto it = std::back_inserter(out);
  if (e.time_us.has_value()) fmt::format_to(it, " t={}", *e.time_us);
  if (e.stream.value() != 0) fmt::format_to(it, " stream={}", e.stream.value());
  if (!e.tag.empty()) fmt::format_to(it, " tag={}", e.tag);
  if (e.shape.has_value()) fmt::format_to(it, " shape={}", FormatShape(*e.shape));
  if (e.addr.has_value()) fmt::format_to(it, " addr={:#x}", *e.addr);
  if (e.device.value() != 0) fmt::format_to(it, " device={}", e.device.value());
}

}  // namespace

absl::Status TextTraceWriter::FormatEvent(const Event& e, fmt::memory_buffer& out) {
  if (absl::Status s = CheckAttributePlaces(e); !s.ok()) return s;
  if (!e.tag.empty()) {
    if (absl::Status s = CheckField("tag", e.tag); !s.ok()) return s;
  }
  auto it = std::back_inserter(out);
  if (e.kind == EventKind::kMark) {
    if (e.label.empty()) return Error("cannot write a mark without a label");
    if (absl::Status s = CheckField("mark label", e.label); !s.ok()) return s;
    fmt::format_to(it, "mark {}", e.label);
  } else {
    fmt::format_to(it, "{} {}", EventKindName(e.kind), e.id);
    if (HasBytesField(e.kind)) fmt::format_to(it, " {}", e.bytes.value());
  }
  AppendAttributes(e, out);
  return absl::OkStatus();
}

absl::Status TextTraceWriter::WriteHeader(const TraceMetadata& metadata) {
  if (header_written_) return Error("the trace header must be written once, before any event");
  for (const auto& [key, value] : metadata.entries) {
    if (absl::Status s = CheckMetadata(key, value); !s.ok()) return s;
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
  if (!out_) return Error("write error");
  return absl::OkStatus();
}

}  // namespace hbmsim
