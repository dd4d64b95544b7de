#include "trace/bfc_dump/context_lines.h"

#include <array>
#include <cstdint>
#include <utility>

#include "trace/bfc_dump/line_text.h"

namespace hbmsim::trace::bfc_dump {
namespace {

// "device:GPU:0" -> "GPU:0": the text after the last "device:" up to a space or ')'.
std::string DeviceName(std::string_view text) {
  const size_t at = text.rfind("device:");
  if (at == std::string_view::npos) return "";
  std::string_view rest = text.substr(at + 7);
  const size_t end = rest.find_first_of(" )\t");
  return std::string(rest.substr(0, end));
}

}  // namespace

std::optional<DeviceCreated> MatchDeviceCreated(std::string_view msg) {
  if (!msg.starts_with("Created TensorFlow device") && !msg.starts_with("Created device")) {
    return std::nullopt;
  }
  const size_t with = msg.find(" with ");
  if (with == std::string_view::npos) return std::nullopt;
  Cursor c(msg.substr(with + 6));
  DeviceCreated d;
  // A limit past 2^64 bytes is no device's: not this line.
  if (!c.TakeU64(d.mib) || !c.Take(" MB memory") || d.mib > (UINT64_MAX >> 20)) return std::nullopt;
  d.device = DeviceName(msg.substr(0, with));
  return d;
}

std::optional<TensorOom> MatchTensorOom(std::string_view msg) {
  constexpr std::string_view kKey = "OOM when allocating tensor with shape";
  const size_t at = msg.find(kKey);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = msg.substr(at + kKey.size());
  const size_t close = rest.find(']');
  if (rest.empty() || rest[0] != '[' || close == std::string_view::npos) return std::nullopt;
  TensorOom t;
  t.shape = std::string(rest.substr(0, close + 1));
  rest = rest.substr(close + 1);
  Cursor c(rest);
  std::string_view word;
  if (c.Take(" and type ") && c.TakeWord(word)) t.dtype = std::string(word);
  const size_t by = rest.find(" by allocator ");
  if (by != std::string_view::npos) {
    Cursor a(rest.substr(by + 14));
    if (a.TakeWord(word)) t.allocator = std::string(word);
  }
  return t;
}

std::optional<uint64_t> DtypeBytes(std::string_view dtype) {
  static constexpr std::array<std::pair<std::string_view, uint64_t>, 16> kSizes = {{
      {"float", 4},
      {"double", 8},
      {"half", 2},
      {"bfloat16", 2},
      {"int8", 1},
      {"uint8", 1},
      {"int16", 2},
      {"uint16", 2},
      {"int32", 4},
      {"uint32", 4},
      {"int64", 8},
      {"uint64", 8},
      {"bool", 1},
      {"complex64", 8},
      {"complex128", 16},
      {"float16", 2},
  }};
  for (const auto& [name, bytes] : kSizes) {
    if (name == dtype) return bytes;
  }
  return std::nullopt;
}

}  // namespace hbmsim::trace::bfc_dump
