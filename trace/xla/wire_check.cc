#include "trace/xla/wire_check.h"

#include "fmt/format.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "trace/text/utf8.h"

namespace hbmsim::trace::xla {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

constexpr int kMaxDepth = 64;  // our messages nest 4 deep; deeper is hostile

std::optional<WireError> Walk(std::string_view bytes, const Descriptor* type, size_t base, int depth);

// A known message or string field: read its length and check its contents.
std::optional<WireError> CheckLenField(CodedInputStream& in, std::string_view bytes, const FieldDescriptor* f,
                                       size_t base, size_t at, int depth) {
  uint32_t len = 0;
  if (!in.ReadVarint32(&len)) return WireError{base + at, "bad length"};
  const size_t start = static_cast<size_t>(in.CurrentPosition());
  if (len > bytes.size() - start) {
    return WireError{base + at, fmt::format("field {} of length {} runs past the end ({} bytes left)",
                                            f->name(), len, bytes.size() - start)};
  }
  const std::string_view inner = bytes.substr(start, len);
  if (f->type() == FieldDescriptor::TYPE_MESSAGE) {
    if (depth >= kMaxDepth) return WireError{base + at, "messages nested too deep"};
    if (auto e = Walk(inner, f->message_type(), base + start, depth + 1)) return e;
  } else if (f->type() == FieldDescriptor::TYPE_STRING && !IsValidUtf8(inner)) {
    return WireError{base + start, fmt::format("field {} is not valid UTF-8", f->name())};
  }
  in.Skip(static_cast<int>(len));
  return std::nullopt;
}

std::optional<WireError> Walk(std::string_view bytes, const Descriptor* type, size_t base, int depth) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  while (static_cast<size_t>(in.CurrentPosition()) < bytes.size()) {
    const size_t at = static_cast<size_t>(in.CurrentPosition());
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return WireError{base + at, "bad field tag"};
    const FieldDescriptor* f =
        type->FindFieldByNumber(static_cast<int>(WireFormatLite::GetTagFieldNumber(tag)));
    const bool len_field = WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    if (f != nullptr && len_field &&
        (f->type() == FieldDescriptor::TYPE_MESSAGE || f->type() == FieldDescriptor::TYPE_STRING)) {
      if (auto e = CheckLenField(in, bytes, f, base, at, depth)) return e;
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return WireError{base + at, "field runs past the end or has a bad wire type"};
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<uint64_t> TakeVarint(std::string_view& s) {
  uint64_t v = 0;
  for (int i = 0; i < 10 && i < static_cast<int>(s.size()); ++i) {
    const auto byte = static_cast<uint8_t>(s[i]);
    v |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      s.remove_prefix(i + 1);
      return v;
    }
  }
  return std::nullopt;
}

std::optional<WireError> FindWireError(std::string_view bytes, const Descriptor* type) {
  return Walk(bytes, type, 0, 0);
}

}  // namespace hbmsim::trace::xla
