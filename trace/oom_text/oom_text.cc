#include "trace/oom_text/oom_text.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "fmt/format.h"
#include "trace/oom_text/blocks.h"

namespace hbmsim::trace::oom_text {

const Figure* OomText::Find(std::string_view name) const {
  for (const Figure& f : figures) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

namespace {

int64_t ElementBytes(std::string_view type) {
  for (auto [name, bytes] : {std::pair{"pred", 1},
                             {"s8", 1},
                             {"u8", 1},
                             {"f8e4m3fn", 1},
                             {"f8e5m2", 1},
                             {"s16", 2},
                             {"u16", 2},
                             {"f16", 2},
                             {"bf16", 2},
                             {"s32", 4},
                             {"u32", 4},
                             {"f32", 4},
                             {"s64", 8},
                             {"u64", 8},
                             {"f64", 8},
                             {"c64", 8},
                             {"c128", 16}}) {
    if (type == name) return bytes;
  }
  return 0;
}

}  // namespace

std::optional<int64_t> ShapeBytes(std::string_view shape) {
  const size_t open = shape.find('['), close = shape.find(']');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  int64_t bytes = ElementBytes(shape.substr(0, open));
  if (bytes == 0) return std::nullopt;
  std::string_view dims = shape.substr(open + 1, close - open - 1);
  while (!dims.empty()) {
    const size_t comma = dims.find(',');
    const std::string_view dim = dims.substr(0, comma);
    int64_t n = 0;
    if (dim.empty() || dim.size() > 12) return std::nullopt;
    for (char c : dim) {
      if (c < '0' || c > '9') return std::nullopt;
      n = n * 10 + (c - '0');
    }
    if (n != 0 && bytes > INT64_MAX / n) return std::nullopt;
    bytes *= n;
    dims.remove_prefix(comma == std::string_view::npos ? dims.size() : comma + 1);
  }
  return bytes;
}

namespace {

// The same block printed again (a log's "Recent warning and error logs" repeats the error).
bool SameBlock(const OomText& a, const OomText& b) {
  if (a.kind != b.kind || a.figures.size() != b.figures.size()) return false;
  for (size_t i = 0; i < a.figures.size(); ++i) {
    if (a.figures[i].name != b.figures[i].name || a.figures[i].text != b.figures[i].text) return false;
  }
  return true;
}

}  // namespace

std::vector<OomText> ReadOomTexts(std::string_view text) {
  const LogLines log = SplitLog(text);
  std::vector<OomText> found;
  ReadTpuAllocations(log, found);
  ReadAllocatableFailures(log, found);
  ReadReservations(log, found);
  ReadCompileTimeReports(log, found);
  ReadBufferAssignments(log, found);
  ReadBfcHeaders(log, found);
  ReadBareRequests(log, found);
  ReadAllocatorStats(log, found);
  std::stable_sort(found.begin(), found.end(),
                   [](const OomText& a, const OomText& b) { return a.line < b.line; });
  std::vector<OomText> out;
  for (OomText& t : found) {
    auto same = std::find_if(out.begin(), out.end(), [&](const OomText& o) { return SameBlock(o, t); });
    if (same != out.end()) {
      same->repeated_at.push_back(t.line);
    } else {
      out.push_back(std::move(t));
    }
  }
  return out;
}

absl::StatusOr<std::vector<OomText>> ReadOomTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  std::string text(size > 0 ? std::min<size_t>(static_cast<size_t>(size), kMaxLogBytes) : 0, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return ReadOomTexts(text);
}

}  // namespace hbmsim::trace::oom_text
