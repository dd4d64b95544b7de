#include "trace/text/text_reader.h"

#include <cstring>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "trace/text/common_line.h"
#include "trace/text/event_parser.h"
#include "trace/text/utf8.h"

namespace hbmsim::trace {
namespace {

constexpr std::string_view kFormatName = "hbmsim-trace";
constexpr std::string_view kVersion = "v1";

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// `trimmed` is a line without its leading and trailing blanks.
bool IsComment(std::string_view trimmed) { return !trimmed.empty() && trimmed.front() == '#'; }

}  // namespace

TextTraceReader::TextTraceReader(std::unique_ptr<ByteSource> source, std::string name, size_t max_line_bytes)
    : name_(std::move(name)), lines_(std::move(source), max_line_bytes) {}

absl::StatusOr<std::unique_ptr<TextTraceReader>> TextTraceReader::Open(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenFileSource(path);
  if (!source.ok()) return source.status();
  return FromSource(std::move(*source), path);
}

absl::StatusOr<std::unique_ptr<TextTraceReader>> TextTraceReader::FromString(std::string text,
                                                                             std::string name) {
  return FromSource(StringSource(std::move(text)), std::move(name));
}

absl::StatusOr<std::unique_ptr<TextTraceReader>> TextTraceReader::FromSource(
    std::unique_ptr<ByteSource> source, std::string name, size_t max_line_bytes) {
  std::unique_ptr<TextTraceReader> reader(
      new TextTraceReader(std::move(source), std::move(name), max_line_bytes));
  if (absl::Status s = reader->ReadHeader(); !s.ok()) return s;
  return reader;
}

std::string TextTraceReader::Location() const { return fmt::format("{}:{}", name_, lines_.line_number()); }

absl::Status TextTraceReader::AtLine(const absl::Status& status) const {
  return absl::InvalidArgumentError(fmt::format("{}: {}", Location(), std::string(status.message())));
}

absl::StatusOr<bool> TextTraceReader::NextLine(std::string_view& line) {
  absl::StatusOr<bool> got = lines_.Next(line);
  if (!got.ok()) return AtLine(got.status());
  if (*got && std::memchr(line.data(), '\0', line.size()) != nullptr) {
    return AtLine(absl::InvalidArgumentError("NUL byte in line (is this a binary file?)"));
  }
  return got;
}

absl::Status TextTraceReader::ReadHeader() {
  bool first_comment = true;
  std::string_view line;
  while (true) {
    absl::StatusOr<bool> got = NextLine(line);
    if (!got.ok()) return got.status();
    if (!*got) return absl::OkStatus();  // a trace without events
    const std::string_view trimmed = TrimSpace(line);
    if (trimmed.empty()) continue;
    if (!IsComment(trimmed)) {
      pending_line_ = line;
      has_pending_line_ = true;
      return CheckFirstEventLine(line);
    }
    if (absl::Status s = ParseHeaderComment(trimmed.substr(1), first_comment); !s.ok()) return AtLine(s);
    first_comment = false;
  }
}

absl::Status TextTraceReader::CheckFirstEventLine(std::string_view line) {
  Event scratch;
  std::string other_attrs;
  const absl::Status parsed = ParseEventLine(line, scratch, other_attrs);
  if (parsed.ok()) return parsed;
  const absl::Status error = AtLine(parsed);
  if (LooksLikeTensorFlowLog(line)) return error;  // its message names `hbmsim diagnose` already
  const std::optional<uint64_t> log_line = FindTensorFlowLogLine();
  if (!log_line) return error;
  return absl::InvalidArgumentError(
      fmt::format("{}; line {} is a line of a TensorFlow log: `hbmsim diagnose` reads the out-of-memory dump of a "
                  "BFC allocator's log",
                  std::string(error.message()), *log_line));
}

std::optional<uint64_t> TextTraceReader::FindTensorFlowLogLine() {
  std::string_view line;
  while (lines_.bytes_read() < kMaxLookAheadBytes) {
    absl::StatusOr<bool> got = lines_.Next(line);
    if (!got.ok() || !*got) return std::nullopt;
    if (!IsComment(TrimSpace(line)) && LooksLikeTensorFlowLog(line)) return lines_.line_number();
  }
  return std::nullopt;
}

absl::Status TextTraceReader::ParseHeaderComment(std::string_view body, bool first_comment) {
  body = TrimSpace(body);
  std::string_view rest = body;
  if (first_comment && NextField(rest) == kFormatName) {
    const std::string_view version = TrimSpace(rest);
    if (version == kVersion) {
      metadata_.has_version_header = true;
      return absl::OkStatus();
    }
    if (version.empty()) {
      return absl::InvalidArgumentError("missing version in '# hbmsim-trace' header (expected v1)");
    }
    return absl::InvalidArgumentError(fmt::format(
        "unsupported trace format version '{}' (this reader reads '# hbmsim-trace v1')", version));
  }
  const size_t colon = body.find(':');
  if (colon == std::string_view::npos) return absl::OkStatus();  // a plain comment
  const std::string_view key = TrimSpace(body.substr(0, colon));
  if (key.empty() || key.find_first_of(" \t") != std::string_view::npos) return absl::OkStatus();
  const std::string_view value = TrimSpace(body.substr(colon + 1));
  if (!IsValidUtf8(key) || !IsValidUtf8(value)) {
    return absl::InvalidArgumentError("metadata line is not valid UTF-8");
  }
  metadata_.entries.emplace_back(std::string(key), std::string(value));
  return absl::OkStatus();
}

absl::StatusOr<bool> TextTraceReader::NextEventLine(std::string_view& line) {
  if (has_pending_line_) {
    has_pending_line_ = false;
    line = pending_line_;
    return true;
  }
  while (true) {
    absl::StatusOr<bool> got = NextLine(line);
    if (!got.ok() || !*got) return got;
    const std::string_view trimmed = TrimSpace(line);
    if (!trimmed.empty() && !IsComment(trimmed)) return true;
  }
}

absl::StatusOr<bool> TextTraceReader::Next(Event& e) {
  std::string_view line;
  // The common line (an alloc or a free the one-pass parser takes; never a
  // blank line, a comment or one holding NUL) straight from the line reader:
  // the NUL scan, the trimming and the comment test are for the others.
  if (!has_pending_line_) {
    absl::StatusOr<bool> got = lines_.Next(line);
    if (!got.ok()) return AtLine(got.status());
    if (!*got) return false;
    if (ParseCommonLine(line, e)) return Accept(e);
    if (std::memchr(line.data(), '\0', line.size()) != nullptr) {
      return AtLine(absl::InvalidArgumentError("NUL byte in line (is this a binary file?)"));
    }
    const std::string_view trimmed = TrimSpace(line);
    if (trimmed.empty() || IsComment(trimmed)) {
      absl::StatusOr<bool> next = NextEventLine(line);
      if (!next.ok() || !*next) return next;
    }
  } else {
    absl::StatusOr<bool> got = NextEventLine(line);
    if (!got.ok() || !*got) return got;
  }
  if (absl::Status s = ParseEventLine(line, e, other_attrs_); !s.ok()) {
    ++event_lines_;
    return AtLine(s);
  }
  return Accept(e);
}

absl::StatusOr<bool> TextTraceReader::Accept(const Event& e) {
  ++event_lines_;
  if (absl::Status s = validator_.Check(e); !s.ok()) return AtLine(s);
  return true;
}

}  // namespace hbmsim::trace
