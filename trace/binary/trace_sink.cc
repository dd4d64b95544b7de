#include "trace/binary/trace_sink.h"

#include "fmt/format.h"
#include "trace/binary/binary_writer.h"
#include "trace/text/text_writer.h"

namespace hbmsim::trace {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

class TextSink : public TraceSink {
 public:
  explicit TextSink(std::ostream& out) : writer_(out) {}
  absl::Status WriteHeader(const TraceMetadata& m) override { return writer_.WriteHeader(m); }
  absl::Status Write(const Event& e) override { return writer_.Write(e); }
  absl::Status Finish() override { return writer_.Flush(); }

 private:
  TextTraceWriter writer_;
};

class BinarySink : public TraceSink {
 public:
  BinarySink(std::ostream& out, bool compress) : writer_(out, BinaryWriterOptions{.compress = compress}) {}
  absl::Status WriteHeader(const TraceMetadata& m) override { return writer_.WriteHeader(m); }
  absl::Status Write(const Event& e) override { return writer_.Write(e); }
  absl::Status Finish() override { return writer_.Finish(); }

 private:
  BinaryTraceWriter writer_;
};

}  // namespace

std::string TraceFormatForPath(std::string_view path) {
  if (EndsWith(path, ".hbt.zst") || EndsWith(path, ".hbtz")) return "binary-zstd";
  if (EndsWith(path, ".hbt")) return "binary";
  return "text";
}

absl::StatusOr<std::unique_ptr<TraceSink>> MakeTraceSink(std::ostream& out, std::string_view format) {
  if (format == "text") return std::unique_ptr<TraceSink>(new TextSink(out));
  if (format == "binary" || format == "binary-zstd") {
    return std::unique_ptr<TraceSink>(new BinarySink(out, format == "binary-zstd"));
  }
  return absl::InvalidArgumentError(
      fmt::format("unknown trace format '{}' (expected text, binary or binary-zstd)", format));
}

}  // namespace hbmsim::trace
