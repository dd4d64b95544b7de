// The frame of an .hbt file around its events (docs/formats/binary-trace.md):
// the header (magic bytes, version, flags, the count of metadata entries),
// the metadata entries, and the end-of-trace record with its event count and
// CRC-32 of every byte before it, after which nothing may follow. Kept apart
// from the event decoding in binary_reader.cc, whose fast path is what every
// event pays; these run once per file.
#include "fmt/format.h"
#include "trace/binary/binary_reader.h"
#include "trace/text/field_rules.h"
#include "trace/text/utf8.h"

namespace hbmsim::trace {

using binary::Cursor;
using binary::Decode;

Decode BinaryTraceReader::DecodeHeaderStart(Cursor& c, uint64_t& entries) {
  std::string_view magic;
  HBT_TRY(c.Bytes(binary::kMagic.size(), magic));
  if (magic != binary::kMagic) {
    c.p = c.begin;
    return Malformed(c, "not an hbmsim binary trace (bad magic bytes)");
  }
  uint64_t version = 0;
  HBT_TRY(c.Varint(version));
  if (version < binary::kOldestVersion || version > binary::kVersion) {
    return Malformed(
        c, fmt::format("unsupported binary trace version {} (this reader reads versions {} to {})", version,
                       binary::kOldestVersion, binary::kVersion));
  }
  version_ = version;
  uint8_t flags = 0;
  HBT_TRY(c.Byte(flags));
  if (flags != 0) return Malformed(c, fmt::format("unknown header flags {:#04x}", flags));
  HBT_TRY(c.Varint(entries));
  // The magic and version are the binary form of `# hbmsim-trace v1`.
  metadata_.has_version_header = true;
  return Decode::kOk;
}

Decode BinaryTraceReader::DecodeMetadataEntry(Cursor& c) {
  std::string_view key, value;
  HBT_TRY(DecodeString(c, "metadata key", key));
  HBT_TRY(DecodeString(c, "metadata value", value));
  if (key.empty() || HasBlankOrBreak(key) || key.find(':') != std::string_view::npos ||
      value.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos || !IsValidUtf8(key) ||
      !IsValidUtf8(value)) {
    return Malformed(c,
                     "metadata entry the text format cannot carry (empty key, blank, ':', line break, "
                     "NUL or invalid UTF-8)");
  }
  metadata_bytes_ += key.size() + value.size();
  if (metadata_bytes_ > binary::kMaxMetadataBytes) {
    return Malformed(c, fmt::format("metadata larger than {} bytes", binary::kMaxMetadataBytes));
  }
  metadata_.entries.emplace_back(std::string(key), std::string(value));
  return Decode::kOk;
}

Decode BinaryTraceReader::FinishTrace(Cursor& c) {
  const Cursor record{c.begin, c.p - 1, c.end};  // errors name the record's first byte
  uint64_t count = 0;
  HBT_TRY(c.Varint(count));
  if (count != events_) {
    return Malformed(record, fmt::format("the end-of-trace record counts {} events but the file holds {}",
                                         count, events_));
  }
  if (version_ >= binary::kFirstChecksumVersion) {
    const uint32_t computed = window_.ChecksumUpTo(c.p);
    std::string_view stored;
    HBT_TRY(c.Bytes(binary::kChecksumBytes, stored));
    uint32_t expected = 0;
    for (size_t i = 0; i < binary::kChecksumBytes; ++i) {
      expected |= uint32_t{static_cast<uint8_t>(stored[i])} << (8 * i);
    }
    if (expected != computed) {
      return Malformed(record, fmt::format("checksum mismatch: the end-of-trace record says {:#010x} but the "
                                           "bytes before it give {:#010x}; the file is corrupt",
                                           expected, computed));
    }
  }
  finished_ = true;
  return Decode::kOk;
}

absl::Status BinaryTraceReader::CheckNothingFollows() {
  const uint64_t end = window_.offset();
  while (window_.size() == 0) {
    absl::StatusOr<bool> more = window_.Refill();
    if (!more.ok()) {
      return absl::InvalidArgumentError(fmt::format("{}: {}", name_, std::string(more.status().message())));
    }
    if (!*more) return absl::OkStatus();
  }
  return ErrorAt(end, "data after the end-of-trace record");
}

}  // namespace hbmsim::trace
