#include "trace/bfc_dump/line_parsers.h"

#include <array>
#include <utility>

#include "trace/bfc_dump/line_text.h"

namespace hbmsim::trace::bfc_dump {
namespace {

constexpr std::string_view kRanOut = "ran out of memory trying to allocate ";
constexpr std::string_view kNotAFailure = "The caller indicates that this is not a failure";

// "Allocator (GPU_0_bfc) ran out ..." -> "GPU_0_bfc" and the cursor after kRanOut.
std::optional<std::pair<std::string, Cursor>> OomPreamble(std::string_view msg) {
  Cursor c(msg);
  if (c.Take("Ran out of memory trying to allocate ")) return std::make_pair(std::string(), c);
  if (!c.Take("Allocator (")) return std::nullopt;
  const size_t close = c.rest().find(") ");
  if (close == std::string_view::npos || c.rest().substr(close + 2, kRanOut.size()) != kRanOut) {
    return std::nullopt;
  }
  std::string name(c.rest().substr(0, close));
  return std::make_pair(std::move(name), Cursor(c.rest().substr(close + 2 + kRanOut.size())));
}

NotAFailureWarning MakeWarning(std::string allocator, HumanBytes request, std::string_view rest) {
  NotAFailureWarning w{0, std::move(allocator), std::move(request), std::nullopt};
  const size_t at = rest.find("freed_by_count=");
  if (at != std::string_view::npos) {
    Cursor k(rest.substr(at + 15));
    uint64_t count = 0;
    if (k.TakeU64(count)) w.freed_by_count = count;
  }
  return w;
}

// Classifies what follows "<HR> (rounded to N)[ from the X end]".
void ClassifyHeaderTail(std::string_view rest, Header& h) {
  const bool rounded = h.rounded.has_value();
  h.form = rounded ? HeaderForm::kRounded : HeaderForm::kTf1;
  std::string_view tail = rest;
  if (tail.starts_with(" ")) tail.remove_prefix(1);
  if (tail.starts_with("requested by op")) {
    Cursor op(tail.substr(15));
    op.SkipSpaces();
    std::string_view word;
    if (op.TakeWord(word)) h.op = std::string(word);
    h.form = !h.end.empty() ? HeaderForm::kHead
             : h.op.empty() ? HeaderForm::kTruncated
                            : HeaderForm::kRequestedByOp;
  } else if (tail.find("See logs for memory state") != std::string_view::npos) {
    h.form = HeaderForm::kGpuBfc2015;
  }
}

std::optional<ChunkStateEntry> ParseStateEntry(std::string_view text) {
  Cursor c(TrimSpaces(text));
  ChunkStateEntry e;
  uint64_t in_use = 0;
  if (!c.Take("Size: ") || !c.TakeHumanBytes(e.size) || !c.Take(" | Requested Size: ") ||
      !c.TakeHumanBytes(e.requested) || !c.Take(" | in_use: ") || !c.TakeU64(in_use)) {
    return std::nullopt;
  }
  e.in_use = in_use != 0;
  int64_t bin = 0;
  if (c.Take(" | bin_num: ") && c.TakeInt(bin)) e.bin_num = static_cast<int>(bin);
  return e;
}

// Reads "<HR><suffix>" after optional spaces into `out`.
bool TakeHrField(Cursor& c, std::string_view suffix, std::optional<HumanBytes>& out) {
  Cursor probe = c;
  probe.SkipSpaces();
  HumanBytes hr;
  if (!probe.TakeHumanBytes(hr) || !probe.Take(suffix)) return false;
  out = std::move(hr);
  c = probe;
  return true;
}

// The key-value fields after a chunk's address; false on an unknown field.
bool TakeChunkField(Cursor& c, Chunk& chunk, bool& next_before_size) {
  uint64_t v = 0;
  std::string_view word;
  if (c.Take("of size ") && c.TakeU64(v)) {
    chunk.size = v;
  } else if (c.Take("next ") && c.TakeU64(v)) {
    if (chunk.size == 0) next_before_size = true;
    chunk.next = v;
  } else if (c.Take("freed_at_count ") && c.TakeU64(v)) {
    chunk.freed_at_count = v;
  } else if (c.Take("by op ") && c.TakeWord(word)) {
    chunk.op = std::string(word);
  } else if ((c.Take("action_count ") || c.Take("step ")) && c.TakeU64(v)) {
  } else if (c.Take("tag ") && c.TakeWord(word)) {
    chunk.tag = std::string(word);
  } else if (c.Take("allocation_annotation")) {
    // Free text (stack frames) up to " next ".
    const size_t next = c.rest().find(" next ");
    c = Cursor(next == std::string_view::npos ? std::string_view() : c.rest().substr(next + 1));
  } else {
    return false;
  }
  c.SkipSpaces();
  return true;
}

}  // namespace

std::optional<OomLine> MatchOomLine(std::string_view msg) {
  auto preamble = OomPreamble(msg);
  if (!preamble) return std::nullopt;
  auto& [allocator, c] = *preamble;
  HumanBytes request;
  if (!c.TakeHumanBytes(request)) return std::nullopt;
  if (c.rest().find(kNotAFailure) != std::string_view::npos) {
    return MakeWarning(std::move(allocator), std::move(request), c.rest());
  }
  Header h;
  h.allocator = std::move(allocator);
  h.request = std::move(request);
  uint64_t rounded = 0;
  if (c.Take(" (rounded to ") && c.TakeU64(rounded)) {
    h.rounded = rounded;
    c.Take(")");
  }
  std::string_view end;
  if (c.Take(" from the ") && c.TakeWord(end)) {
    h.end = std::string(end);
    c.Take(" end");
  }
  ClassifyHeaderTail(c.rest(), h);
  return h;
}

std::optional<BinLine> MatchBinLine(std::string_view msg) {
  Cursor c(msg);
  BinLine b;
  if (!c.Take("Bin (") || !c.TakeU64(b.bin_size) || !c.Take("):")) return std::nullopt;
  c.SkipSpaces();
  if (!c.Take("Total Chunks: ") || !c.TakeU64(b.total_chunks) || !c.Take(", Chunks in use: ") ||
      !c.TakeU64(b.chunks_in_use)) {
    return std::nullopt;
  }
  b.oldest_form = !c.Take(".");
  if (!TakeHrField(c, " allocated for chunks.", b.allocated)) return b;
  std::optional<HumanBytes> ignored;
  if (b.oldest_form) TakeHrField(c, " client-requested for chunks.", ignored);
  if (!TakeHrField(c, " in use in bin.", b.in_use)) return b;
  TakeHrField(c, " client-requested in use in bin.", b.requested_in_use);
  return b;
}

std::optional<BinFor> MatchBinFor(std::string_view msg) {
  Cursor c(msg);
  BinFor b;
  if (!c.Take("Bin for ") || !c.TakeHumanBytes(b.rounded) || !c.Take(" was ") ||
      !c.TakeHumanBytes(b.bin_size)) {
    return std::nullopt;
  }
  return b;
}

std::optional<ChunkStateLine> MatchChunkState(std::string_view msg) {
  if (!msg.starts_with("Size: ")) return std::nullopt;
  const size_t prev_at = msg.find(", prev:");
  const size_t next_at = msg.find(", next:");
  const size_t own_end = std::min(prev_at, next_at);
  std::optional<ChunkStateEntry> own = ParseStateEntry(msg.substr(0, own_end));
  if (!own) return std::nullopt;
  ChunkStateLine line{0, *own, std::nullopt, std::nullopt};
  if (prev_at != std::string_view::npos) {
    line.prev = ParseStateEntry(msg.substr(
        prev_at + 7, next_at == std::string_view::npos ? std::string_view::npos : next_at - prev_at - 7));
  }
  if (next_at != std::string_view::npos) line.next = ParseStateEntry(msg.substr(next_at + 7));
  return line;
}

std::optional<uint64_t> MatchRegionLine(std::string_view msg) {
  Cursor c(msg);
  uint64_t size = 0;
  if (!c.Take("Next region of size ") || !c.TakeU64(size)) return std::nullopt;
  return size;
}

std::optional<Chunk> MatchChunkLine(std::string_view msg) {
  Cursor c(msg);
  Chunk chunk;
  const bool tf1_in_use = c.Take("Chunk");
  chunk.in_use = tf1_in_use || c.Take("InUse");
  if (!chunk.in_use && !c.Take("Free")) return std::nullopt;
  if (!c.TakeSpaces() || !c.Take("at ") || !c.TakeHex(chunk.addr) || !c.TakeSpaces()) return std::nullopt;
  bool next_before_size = false;
  while (!c.done() && TakeChunkField(c, chunk, next_before_size)) {
  }
  if (chunk.size == 0) return std::nullopt;
  chunk.layout = !chunk.next        ? ChunkLayout::kTf1
                 : next_before_size ? ChunkLayout::kNextBeforeSize
                                    : ChunkLayout::kNextAfterSize;
  return chunk;
}

std::optional<SummaryLine> MatchSummaryLine(std::string_view msg) {
  Cursor c(msg);
  SummaryLine s;
  if (!c.TakeU64(s.count) || !c.Take(" Chunks of size ") || !c.TakeU64(s.size) || !c.Take(" totalling ") ||
      !c.TakeHumanBytes(s.total)) {
    return std::nullopt;
  }
  return s;
}

std::optional<HumanBytes> MatchSumTotal(std::string_view msg) {
  Cursor c(msg);
  HumanBytes total;
  if (!c.Take("Sum Total of in-use chunks: ") || !c.TakeHumanBytes(total)) return std::nullopt;
  return total;
}

std::optional<PoolLine> MatchPoolLine(std::string_view msg) {
  Cursor c(msg);
  PoolLine p;
  p.legacy_name = c.Take("total_region_allocated_bytes_: ");
  if (!p.legacy_name && !c.Take("Total bytes in pool: ")) return std::nullopt;
  if (!c.TakeU64(p.pool_bytes) || !c.Take(" memory_limit_: ") || !c.TakeU64(p.memory_limit) ||
      !c.Take(" available bytes: ") || !c.TakeU64(p.available) ||
      !c.Take(" curr_region_allocation_bytes_: ") || !c.TakeU64(p.curr_region_allocation_bytes)) {
    return std::nullopt;
  }
  return p;
}

std::optional<SubAllocatorFailure> MatchSubAllocatorFailure(std::string_view msg) {
  const size_t at = msg.find("failed to allocate ");
  if (at == std::string_view::npos) return std::nullopt;
  Cursor c(msg.substr(at + 19));
  std::string_view hr;
  SubAllocatorFailure f;
  if (!c.TakeWord(hr) || !c.Take(" (") || !c.TakeU64(f.bytes) || !c.Take(" bytes) from device")) {
    return std::nullopt;
  }
  return f;
}

std::optional<HeadMemorySummary> MatchHeadMemorySummary(std::string_view msg) {
  Cursor c(msg);
  HeadMemorySummary m;
  if (!c.Take("Allocator memory summary: rounded request ") || !c.TakeHumanBytes(m.rounded) ||
      !c.Take(", total free in pool ") || !c.TakeHumanBytes(m.free) ||
      !c.Take(", largest free chunk usable by lower end ") || !c.TakeHumanBytes(m.largest_free) ||
      !c.Take(", unallocated bytes ") || !c.TakeHumanBytes(m.unallocated) || !c.Take(", pool size ") ||
      !c.TakeHumanBytes(m.pool) || !c.Take(", pool limit ") || !c.TakeHumanBytes(m.limit)) {
    return std::nullopt;
  }
  return m;
}

bool MatchStatsLine(std::string_view msg, Stats& stats) {
  const std::array<std::pair<std::string_view, std::optional<uint64_t>*>, 8> fields = {{
      {"Limit:", &stats.limit},
      {"InUse:", &stats.in_use},
      {"MaxInUse:", &stats.max_in_use},
      {"NumAllocs:", &stats.num_allocs},
      {"MaxAllocSize:", &stats.max_alloc_size},
      {"Reserved:", &stats.reserved},
      {"PeakReserved:", &stats.peak_reserved},
      {"LargestFreeBlock:", &stats.largest_free_block},
  }};
  for (const auto& [label, field] : fields) {
    Cursor c(msg);
    if (!c.Take(label) || !c.TakeSpaces()) continue;
    uint64_t value = 0;
    HumanBytes hr;
    Cursor number = c, human = c;
    if (number.TakeU64(value) && number.done()) {
      *field = value;
    } else if (human.TakeHumanBytes(hr) && human.done()) {
      *field = hr.approx_bytes;
      stats.human_readable = true;
    } else {
      return false;
    }
    ++stats.lines;
    return true;
  }
  return false;
}

bool IsOccupancyLine(std::string_view msg) {
  if (msg == "<allocator contains no memory>") return true;
  if (msg.empty()) return false;
  for (char ch : msg) {
    if (ch != '_' && ch != '*' && ch != 'x') return false;
  }
  return true;
}

}  // namespace hbmsim::trace::bfc_dump
