#include "trace/pprof/device_profile.h"

#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "fmt/format.h"
#include "trace/core/gunzip.h"
#include "trace/pprof/profile.h"
#include "trace/pprof/resolve.h"
#include "trace/pprof/wire.h"

namespace hbmsim::trace::pprof {
namespace {

bool IsGzip(std::string_view b) {
  return b.size() >= 2 && static_cast<uint8_t>(b[0]) == 0x1f && static_cast<uint8_t>(b[1]) == 0x8b;
}

// True when `b` opens with `fields` sample_type fields (ValueType {1 type, 2 unit}, both set).
bool OpensWithSampleTypes(std::string_view b, int fields) {
  WireCursor top(b, 0);
  for (int i = 0; i < fields; ++i) {
    absl::StatusOr<WireField> f = top.Next();
    if (!f.ok() || f->number != 1 || f->type != WireType::kBytes || f->bytes.empty() ||
        f->bytes.size() > 20) {
      return false;
    }
    WireCursor inner(f->bytes, 0);
    int seen = 0;
    while (!inner.done()) {
      absl::StatusOr<WireField> g = inner.Next();
      if (!g.ok() || (g->number != 1 && g->number != 2) || g->type != WireType::kVarint || g->value == 0) {
        return false;
      }
      ++seen;
    }
    if (seen != 2) return false;
  }
  return true;
}

// Inflates what the head of a gzip file holds (a cut stream is fine here).
std::string InflateHead(std::string_view head, size_t want) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return "";
  std::string out(want, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(head.data()));
  z.avail_in = static_cast<uInt>(head.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(want);
  inflate(&z, Z_SYNC_FLUSH);
  out.resize(want - z.avail_out);
  inflateEnd(&z);
  return out;
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(fmt::format("cannot read {}", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

bool LooksLikeDeviceProfile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  std::string head(4096, '\0');
  head.resize(std::fread(head.data(), 1, head.size(), f));
  std::fclose(f);
  if (IsGzip(head)) return OpensWithSampleTypes(InflateHead(head, 64), 1);
  return OpensWithSampleTypes(head, 2);
}

absl::StatusOr<HeldState> ParseDeviceProfile(std::string_view bytes, std::string_view source) {
  std::string inflated;
  std::string_view raw = bytes;
  if (IsGzip(bytes)) {
    absl::StatusOr<std::string> g = GunzipBounded(bytes, kMaxProfileBytes, source);
    if (!g.ok()) return g.status();
    inflated = *std::move(g);
    raw = inflated;
  } else if (bytes.size() > kMaxProfileBytes) {
    return absl::InvalidArgumentError(fmt::format("{}: larger than {} bytes", source, kMaxProfileBytes));
  }
  const std::string where = IsGzip(bytes) ? " of the decompressed profile" : "";
  absl::StatusOr<Profile> p = DecodeProfile(raw);
  absl::StatusOr<HeldState> held = p.ok() ? ResolveDeviceProfile(*p) : absl::StatusOr<HeldState>(p.status());
  if (!held.ok()) {
    // "byte offset N: WHAT" becomes "SOURCE: byte offset N of the decompressed profile: WHAT".
    std::string message(held.status().message());
    const size_t colon = message.find(':');
    if (message.starts_with("byte offset ") && colon != std::string::npos) message.insert(colon, where);
    return absl::InvalidArgumentError(fmt::format("{}: {}", source, message));
  }
  return held;
}

absl::StatusOr<HeldState> ReadDeviceProfileFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadWholeFile(path);
  if (!bytes.ok()) return bytes.status();
  return ParseDeviceProfile(*bytes, path);
}

}  // namespace hbmsim::trace::pprof
