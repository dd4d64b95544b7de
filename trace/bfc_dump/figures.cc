#include "trace/bfc_dump/figures.h"

#include <algorithm>

#include "allocator/core/units.h"
#include "fmt/format.h"
#include "trace/bfc_dump/context_lines.h"
#include "trace/core/human_bytes.h"
#include "trace/layer.h"

namespace hbmsim::trace::bfc_dump {
namespace {

// "GPU_0_bfc" -> "GPU:0"; "" for other names (cuda_host_bfc, ...).
std::string AllocatorDevice(const std::string& allocator) {
  if (!allocator.starts_with("GPU_")) return "";
  const size_t end = allocator.find('_', 4);
  if (end == std::string::npos) return "";
  return "GPU:" + allocator.substr(4, end - 4);
}

std::string Exact(uint64_t bytes) {
  return fmt::format("{} ({})", bytes, HumanReadableNumBytes(Bytes(bytes)));
}

void AddRequest(const BfcDump& dump, const DumpContext& context, std::vector<Figure>& out) {
  if (dump.header) {
    const Header& h = *dump.header;
    std::string value = h.request.text;
    if (h.rounded) value += fmt::format(" (rounded to {})", *h.rounded);
    if (!h.op.empty()) value += fmt::format(", requested by op {}", h.op);
    out.push_back({"request", value, false, h.line});
  }
  if (!dump.bin_for.empty()) {
    const BinFor& b = dump.bin_for.front();
    out.push_back({"request (Bin for)", fmt::format("Bin for {} was {}", b.rounded.text, b.bin_size.text),
                   false, b.line});
    if (!dump.header) {
      out.push_back({"rounded request",
                     fmt::format("about {} bytes: {} as TF prints it (3 significant digits)",
                                 Bytes(b.rounded.approx_bytes).RoundUp(256).value(), b.rounded.text),
                     true, 0});
    }
  }
  if (context.tensor) {
    const TensorOom& t = *context.tensor;
    std::string value = "shape" + t.shape;
    if (!t.dtype.empty()) value += " " + t.dtype;
    if (!t.allocator.empty()) value += " by allocator " + t.allocator;
    out.push_back({"tensor", value, false, t.line});
    if (std::optional<uint64_t> bytes = TensorBytes(t)) {
      out.push_back({"tensor bytes",
                     fmt::format("{}: the dimensions of {} times {} bytes per {}", Exact(*bytes), t.shape,
                                 *DtypeBytes(t.dtype), t.dtype),
                     true, 0});
    }
  }
}

void AddLimitAndTotals(const BfcDump& dump, const DumpContext& context, std::vector<Figure>& out) {
  if (context.device) {
    const DeviceCreated& d = *context.device;
    out.push_back({"device",
                   fmt::format("{} with {} MB memory", d.device.empty() ? "device" : d.device, d.mib), false,
                   d.line});
    out.push_back({"memory limit",
                   fmt::format("at least {}: TF prints the limit in MiB, rounded down, and calls them MB",
                               Exact(d.mib << 20)),
                   true, 0});
  }
  if (dump.pool) {
    const PoolLine& p = *dump.pool;
    out.push_back({"pool", Exact(p.pool_bytes), false, p.line});
    out.push_back({"memory limit", Exact(p.memory_limit), false, p.line});
    out.push_back({"unallocated", Exact(p.available), false, p.line});
  }
  const Stats& s = dump.stats;
  if (s.lines > 0 && !s.human_readable) {
    if (s.limit) out.push_back({"Stats Limit", Exact(*s.limit), false, 0});
    if (s.in_use) out.push_back({"Stats InUse", Exact(*s.in_use), false, 0});
    if (s.max_in_use) out.push_back({"Stats MaxInUse", Exact(*s.max_in_use), false, 0});
    if (s.max_alloc_size) out.push_back({"Stats MaxAllocSize", Exact(*s.max_alloc_size), false, 0});
  }
}

void AddChunks(const BfcDump& dump, std::vector<Figure>& out) {
  uint64_t used = 0, used_bytes = 0, free = 0, free_bytes = 0;
  const Chunk* largest_free = nullptr;
  const Chunk* largest_used = nullptr;
  for (const Region& r : dump.regions) {
    for (const Chunk& c : r.chunks) {
      (c.in_use ? used : free)++;
      (c.in_use ? used_bytes : free_bytes) += c.size;
      const Chunk*& largest = c.in_use ? largest_used : largest_free;
      if (largest == nullptr || c.size > largest->size) largest = &c;
    }
  }
  if (used + free == 0) return;
  out.push_back({"chunks seen",
                 fmt::format("{} chunk lines: {} in use ({} bytes), {} free ({} bytes)", used + free, used,
                             used_bytes, free, free_bytes),
                 false, 0});
  if (largest_free != nullptr) {
    out.push_back({"largest free chunk seen", Exact(largest_free->size), false, largest_free->line});
  }
  if (largest_used != nullptr) {
    out.push_back({"largest in-use chunk seen", Exact(largest_used->size), false, largest_used->line});
  }
}

void AddBins(const BfcDump& dump, std::vector<Figure>& out) {
  for (const BinFor& b : dump.bin_for) {
    for (const ChunkStateLine& c : b.chunks) {
      out.push_back({fmt::format("free chunk in bin {}", b.bin_size.text),
                     fmt::format("Size: {} | Requested Size: {}", c.chunk.size.text, c.chunk.requested.text),
                     false, c.line});
    }
  }
  for (const BinLine& b : dump.bins) {
    std::string value = fmt::format("{} chunks, {} in use", b.total_chunks, b.chunks_in_use);
    if (b.allocated) value += fmt::format("; {} allocated", b.allocated->text);
    if (b.in_use) value += fmt::format(", {} in use", b.in_use->text);
    if (b.requested_in_use) value += fmt::format(", {} requested", b.requested_in_use->text);
    // An inconsistent line (no chunk, bytes allocated) stays on its own, to be seen.
    const auto none = [](const std::optional<HumanBytes>& h) { return !h || h->approx_bytes == 0; };
    const bool empty = b.total_chunks == 0 && b.chunks_in_use == 0 && none(b.allocated) && none(b.in_use) &&
                       none(b.requested_in_use);
    out.push_back({fmt::format("bin {}", HumanReadableNumBytes(Bytes(b.bin_size))), value, false, b.line, empty});
  }
}

void AddSummary(const BfcDump& dump, std::vector<Figure>& out) {
  if (dump.summary.empty()) return;
  Bytes total;  // saturating: counts come from the log
  uint64_t chunks = 0;
  for (const SummaryLine& s : dump.summary) {
    chunks += s.count;
    total += Bytes(s.size != 0 && s.count > UINT64_MAX / s.size ? UINT64_MAX : s.count * s.size);
  }
  out.push_back({"in-use summary",
                 fmt::format("{} sizes, {} chunks, {} in use: the sum of the \"Chunks of size\" lines seen",
                             dump.summary.size(), chunks, Exact(total.value())),
                 true, 0});
  if (dump.sum_total) out.push_back({"Sum Total of in-use chunks", dump.sum_total->text, false, 0});
}

}  // namespace

DumpContext FindContext(const BfcLog& log, size_t index) {
  DumpContext context;
  const BfcDump& dump = log.dumps[index];
  const std::string gpu = AllocatorDevice(dump.allocator);
  for (const DeviceCreated& d : log.devices) {
    if (d.line > dump.first_line) break;
    if (gpu.empty() || d.device.empty() || d.device == gpu) context.device = d;
  }
  const int next = index + 1 < log.dumps.size() ? log.dumps[index + 1].first_line : INT32_MAX;
  for (const TensorOom& t : log.tensor_ooms) {
    if (t.line < dump.first_line || t.line >= next) continue;
    if (!dump.allocator.empty() && !t.allocator.empty() && t.allocator != dump.allocator) continue;
    context.tensor = t;
    break;
  }
  return context;
}

std::optional<uint64_t> TensorBytes(const TensorOom& t) {
  const std::optional<uint64_t> element = DtypeBytes(t.dtype);
  if (!element || t.shape.size() < 2) return std::nullopt;
  Bytes bytes(*element);
  uint64_t dim = 0;
  bool digits = false;
  for (char c : std::string_view(t.shape).substr(1)) {
    if (c >= '0' && c <= '9') {
      if (dim > (UINT64_MAX - 9) / 10) return std::nullopt;
      dim = dim * 10 + static_cast<uint64_t>(c - '0');
      digits = true;
    } else if (c == ',' || c == ']') {
      if (!digits) return c == ']' && t.shape == "[]" ? std::optional<uint64_t>(bytes.value()) : std::nullopt;
      if (dim != 0 && bytes.value() > UINT64_MAX / dim) return std::nullopt;
      bytes = Bytes(bytes.value() * dim);
      dim = 0;
      digits = false;
    } else if (c != ' ') {
      return std::nullopt;  // "?" or a symbolic dimension
    }
  }
  return bytes.value();
}

std::vector<Figure> CollectFigures(const BfcDump& dump, const DumpContext& context) {
  std::vector<Figure> out;
  AddRequest(dump, context, out);
  AddLimitAndTotals(dump, context, out);
  AddChunks(dump, out);
  AddBins(dump, out);
  AddSummary(dump, out);
  return out;
}

}  // namespace hbmsim::trace::bfc_dump
