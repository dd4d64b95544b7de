// Where protobuf bytes go wrong. libprotobuf only says "parse failed"; the
// bad-input contract wants the byte offset, so on failure the bytes are
// walked again field by field, descending into the message fields the
// descriptor knows, to find the first byte that breaks the wire format.
#ifndef HBMSIM_TRACE_XLA_WIRE_CHECK_H_
#define HBMSIM_TRACE_XLA_WIRE_CHECK_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "google/protobuf/descriptor.h"

namespace hbmsim::trace::xla {

struct WireError {
  size_t offset = 0;  // from the start of the bytes
  std::string what;   // "bad tag", "length 500 runs past the end (90 bytes left)", ...
};

// The first wire-format error in `bytes` read as `type`, or nullopt.
std::optional<WireError> FindWireError(std::string_view bytes, const google::protobuf::Descriptor* type);

// True when a file of `file_size` bytes starts like a protobuf made of
// length-delimited fields numbered 1..4: the first (up to `max_fields`) tags
// are such fields, the first field's contents start with a control byte (a
// nested tag; a text line starts with a printable character), and every
// length fits the file, except that the last one examined may run past the
// end (a cut file, which the reader then reports with its byte offset).
// `read_at(offset, n)` returns up to n bytes of the file at offset.
template <typename ReadAt>
bool TopLevelLooksLikeLenFields(uint64_t file_size, int max_fields, ReadAt read_at);

// Decodes a varint from the front of `s`, advancing it.
std::optional<uint64_t> TakeVarint(std::string_view& s);

template <typename ReadAt>
bool TopLevelLooksLikeLenFields(uint64_t file_size, int max_fields, ReadAt read_at) {
  if (file_size == 0) return false;
  uint64_t at = 0;
  for (int i = 0; i < max_fields && at < file_size; ++i) {
    const std::string head = read_at(at, 20);
    std::string_view s = head;
    std::optional<uint64_t> tag = TakeVarint(s);
    if (!tag || (*tag & 7) != 2 || (*tag >> 3) < 1 || (*tag >> 3) > 4) return false;
    std::optional<uint64_t> len = TakeVarint(s);
    if (!len) return false;
    if (i == 0 && *len > 0 && (s.empty() || static_cast<uint8_t>(s[0]) >= 0x20)) return false;
    const uint64_t header = head.size() - s.size();
    if (*len > file_size - at - std::min<uint64_t>(header, file_size - at))
      return true;  // cut: the reader says where
    at += header + *len;
  }
  return true;
}

}  // namespace hbmsim::trace::xla

#endif  // HBMSIM_TRACE_XLA_WIRE_CHECK_H_
