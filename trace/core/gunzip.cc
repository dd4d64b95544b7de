#include "trace/core/gunzip.h"

#include <zlib.h>

#include "fmt/format.h"

namespace hbmsim::trace {

absl::StatusOr<std::string> GunzipBounded(std::string_view bytes, size_t max_out, std::string_view source) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) return absl::InternalError("zlib: inflateInit2 failed");
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  char buf[65536];
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    const int rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
    const size_t at = bytes.size() - z.avail_in;
    if (out.size() > max_out) {
      inflateEnd(&z);
      return absl::InvalidArgumentError(
          fmt::format("{}: byte offset {}: decompresses to more than {} bytes", source, at, max_out));
    }
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK || (z.avail_in == 0 && z.avail_out != 0)) {
      const std::string why = rc == Z_OK || rc == Z_BUF_ERROR
                                  ? "the gzip stream is cut short"
                                  : (z.msg != nullptr ? z.msg : "corrupt gzip data");
      inflateEnd(&z);
      return absl::InvalidArgumentError(fmt::format("{}: byte offset {}: {}", source, at, why));
    }
  }
  inflateEnd(&z);
  return out;
}

}  // namespace hbmsim::trace
