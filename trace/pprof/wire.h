// The protobuf wire format, read by hand: a pprof Profile is six small
// message types of integers and strings, and reading them field by field
// lets every error name the byte where the file goes wrong (libprotobuf only
// says "parse failed"). Unknown fields are skipped, as protobuf does; packed
// and unpacked repeated integers are both accepted (proto3 writers pack,
// older ones do not).
//
//   message := field*        field := tag(varint: number << 3 | wire type) payload
//   wire type 0: varint      1: 8 bytes     2: varint length + bytes     5: 4 bytes
#ifndef HBMSIM_TRACE_PPROF_WIRE_H_
#define HBMSIM_TRACE_PPROF_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace hbmsim::trace::pprof {

enum class WireType : uint8_t { kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5 };

struct WireField {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
  uint64_t value = 0;      // varint and fixed payloads
  std::string_view bytes;  // length-delimited payloads
  size_t offset = 0;       // of the tag, from the start of the whole buffer
};

// Walks the fields of one message. Offsets count from the start of the
// outermost buffer, so a nested message's errors point into the file.
class WireCursor {
 public:
  // `base`: the offset of `bytes` in the outermost buffer.
  WireCursor(std::string_view bytes, size_t base) : rest_(bytes), at_(base) {}

  bool done() const { return rest_.empty(); }
  // The next field. Errors: InvalidArgument "byte offset N: WHAT".
  absl::StatusOr<WireField> Next();

 private:
  absl::StatusOr<uint64_t> Varint(const char* what);

  std::string_view rest_;
  size_t at_;
};

// The integers of a repeated field, packed (wire type 2) or not (0), appended
// to `out`; `limit` caps the total count (a hostile file cannot grow it).
absl::Status AppendIntegers(const WireField& f, std::vector<uint64_t>& out, size_t limit);

// "byte offset N: WHAT", the error every decoder of this folder returns.
absl::Status WireError(size_t offset, std::string_view what);

}  // namespace hbmsim::trace::pprof

#endif  // HBMSIM_TRACE_PPROF_WIRE_H_
