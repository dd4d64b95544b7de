#include "trace/pprof/wire.h"

#include "fmt/format.h"

namespace hbmsim::trace::pprof {

absl::Status WireError(size_t offset, std::string_view what) {
  return absl::InvalidArgumentError(fmt::format("byte offset {}: {}", offset, what));
}

absl::StatusOr<uint64_t> WireCursor::Varint(const char* what) {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (rest_.empty()) return WireError(at_, fmt::format("{} cut short", what));
    const uint8_t byte = static_cast<uint8_t>(rest_.front());
    rest_.remove_prefix(1);
    ++at_;
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  return WireError(at_, fmt::format("{} longer than 10 bytes", what));
}

absl::StatusOr<WireField> WireCursor::Next() {
  WireField f;
  f.offset = at_;
  absl::StatusOr<uint64_t> tag = Varint("field tag");
  if (!tag.ok()) return tag.status();
  f.number = static_cast<uint32_t>(*tag >> 3);
  if (f.number == 0 || (*tag >> 3) > 0x1fffffff)
    return WireError(f.offset, fmt::format("bad field tag {}", *tag));
  const uint64_t type = *tag & 7;
  switch (type) {
    case 0: {
      absl::StatusOr<uint64_t> v = Varint("varint");
      if (!v.ok()) return v.status();
      f.value = *v;
      break;
    }
    case 1:
    case 5: {
      const size_t n = type == 1 ? 8 : 4;
      if (rest_.size() < n) return WireError(at_, fmt::format("{}-byte field cut short", n));
      for (size_t i = 0; i < n; ++i) f.value |= uint64_t{static_cast<uint8_t>(rest_[i])} << (8 * i);
      rest_.remove_prefix(n);
      at_ += n;
      break;
    }
    case 2: {
      absl::StatusOr<uint64_t> len = Varint("length");
      if (!len.ok()) return len.status();
      if (*len > rest_.size()) {
        return WireError(at_, fmt::format("length {} runs past the end ({} bytes left)", *len, rest_.size()));
      }
      f.bytes = rest_.substr(0, *len);
      rest_.remove_prefix(*len);
      at_ += *len;
      break;
    }
    default:
      return WireError(f.offset,
                       fmt::format("field {} has wire type {}: groups (3, 4) are obsolete, 6 and 7 do "
                                   "not exist",
                                   f.number, type));
  }
  f.type = static_cast<WireType>(type);
  return f;
}

absl::Status AppendIntegers(const WireField& f, std::vector<uint64_t>& out, size_t limit) {
  if (f.type == WireType::kVarint) {
    if (out.size() >= limit)
      return WireError(f.offset, fmt::format("more than {} integers in one field", limit));
    out.push_back(f.value);
    return absl::OkStatus();
  }
  if (f.type != WireType::kBytes)
    return WireError(f.offset, "a repeated integer that is neither varint nor packed");
  std::string_view rest = f.bytes;
  while (!rest.empty()) {
    uint64_t value = 0;
    int shift = 0;
    for (;; shift += 7) {
      if (rest.empty() || shift >= 64) return WireError(f.offset, "a packed integer cut short");
      const uint8_t byte = static_cast<uint8_t>(rest.front());
      rest.remove_prefix(1);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
    if (out.size() >= limit)
      return WireError(f.offset, fmt::format("more than {} integers in one field", limit));
    out.push_back(value);
  }
  return absl::OkStatus();
}

}  // namespace hbmsim::trace::pprof
