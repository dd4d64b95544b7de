// Shared by the .hbt tests: convert a trace between text and binary in
// memory, through the real readers and writers.
#ifndef HBMSIM_TESTS_BINARY_BINARY_TEST_UTIL_H_
#define HBMSIM_TESTS_BINARY_BINARY_TEST_UTIL_H_

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/status/statusor.h"
#include "sim/all_layers.h"
#include "trace/binary/binary_reader.h"
#include "trace/binary/binary_writer.h"
#include "trace/text/text_reader.h"
#include "trace/text/text_writer.h"

namespace hbmsim::testing {

inline std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Every event of `reader` into `write`; the first error of either side.
template <typename Write>
absl::Status Pump(EventReader& reader, Write write) {
  Event e;
  while (true) {
    absl::StatusOr<bool> got = reader.Next(e);
    if (!got.ok()) return got.status();
    if (!*got) return absl::OkStatus();
    if (absl::Status s = write(e); !s.ok()) return s;
  }
}

inline absl::StatusOr<std::string> ToBinary(EventReader& reader, bool compress) {
  std::ostringstream out;
  BinaryTraceWriter writer(out, BinaryWriterOptions{.compress = compress});
  if (absl::Status s = writer.WriteHeader(reader.metadata()); !s.ok()) return s;
  if (absl::Status s = Pump(reader, [&](const Event& e) { return writer.Write(e); }); !s.ok()) return s;
  if (absl::Status s = writer.Finish(); !s.ok()) return s;
  return out.str();
}

inline absl::StatusOr<std::string> ToText(EventReader& reader) {
  std::ostringstream out;
  TextTraceWriter writer(out);
  if (absl::Status s = writer.WriteHeader(reader.metadata()); !s.ok()) return s;
  if (absl::Status s = Pump(reader, [&](const Event& e) { return writer.Write(e); }); !s.ok()) return s;
  if (absl::Status s = writer.Flush(); !s.ok()) return s;
  return out.str();
}

inline absl::StatusOr<std::string> TextToBinary(const std::string& text, bool compress = false) {
  absl::StatusOr<std::unique_ptr<TextTraceReader>> r = TextTraceReader::FromString(text, "t.trace");
  if (!r.ok()) return r.status();
  return ToBinary(**r, compress);
}

inline absl::StatusOr<std::string> BinaryToText(const std::string& bytes) {
  absl::StatusOr<std::unique_ptr<BinaryTraceReader>> r = BinaryTraceReader::FromString(bytes, "t.hbt");
  if (!r.ok()) return r.status();
  return ToText(**r);
}

// Reads a binary trace to its end; the first error, or OK.
inline absl::Status ReadAll(const std::string& bytes) {
  absl::StatusOr<std::unique_ptr<BinaryTraceReader>> r = BinaryTraceReader::FromString(bytes, "t.hbt");
  if (!r.ok()) return r.status();
  return Pump(**r, [](const Event&) { return absl::OkStatus(); });
}

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_BINARY_BINARY_TEST_UTIL_H_
