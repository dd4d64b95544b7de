// What a TensorFlow / XLA BFC allocator prints when an allocation fails: the
// OOM header, then DumpMemoryLog's body (bins, chunk state, regions with their
// chunks, in-use summary, pool line, Stats) and the occupancy line
// (bfc-allocator.md §2-§3 of the reference notes). One BfcDump holds one such dump,
// exactly as far as the log shows it: every part is optional, because users
// paste excerpts. Numbers printed by HumanReadableNumBytes ("585.94MiB") are
// kept as text beside the bytes they stand for, since they are rounded.
#ifndef HBMSIM_TRACE_BFC_DUMP_DUMP_H_
#define HBMSIM_TRACE_BFC_DUMP_DUMP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hbmsim::trace::bfc_dump {

// The 2 MiB page the GPU driver maps device memory in: what "pages" means in
// a dump's diagnosis and heap picture.
inline constexpr uint64_t kPage = uint64_t{2} << 20;

// A HumanReadableNumBytes value: the printed text and the bytes it denotes
// (value x unit, so 585.94MiB is 614402621 where the truth was 614400000).
struct HumanBytes {
  std::string text;
  uint64_t approx_bytes = 0;
};

// The "ran out of memory trying to allocate" line and its era.
enum class HeaderForm {
  kGpuBfc2015,     // "Ran out of memory trying to allocate X.  See logs for memory state" (after the dump)
  kTf1,            // "... allocate X.  Current allocation summary follows."
  kRounded,        // "... allocate X (rounded to N).  Current ..." (TF ~2.1-2.3)
  kRequestedByOp,  // "... (rounded to N)requested by op OP" (TF ~2.4-2.20, REF)
  kHead,           // "... (rounded to N) from the lower end requested by op OP"
  kTruncated,      // "(rounded to N)" and then nothing: the op stream went bad
};

struct Header {
  int line = 0;
  HeaderForm form = HeaderForm::kTf1;
  std::string allocator;  // "GPU_0_bfc"; empty in the 2015 form
  HumanBytes request;     // the un-rounded request, as printed
  std::optional<uint64_t> rounded;
  std::string op;   // "requested by op <op>"; empty when absent
  std::string end;  // HEAD: "lower" / "upper"
};

// `Bin (<size>): \tTotal Chunks: T, Chunks in use: U. ...`
struct BinLine {
  int line = 0;
  uint64_t bin_size = 0;  // 256 << bin number
  uint64_t total_chunks = 0;
  uint64_t chunks_in_use = 0;
  std::optional<HumanBytes> allocated;  // "<HR> allocated for chunks"
  std::optional<HumanBytes> in_use;     // "<HR> in use in bin"
  std::optional<HumanBytes> requested_in_use;
  bool oldest_form = false;  // <= TF 1.1: no '.' after U, extra "client-requested for chunks"
};

// One side of a chunk-state line: `Size: HR | Requested Size: HR | in_use: 0 | bin_num: 20`.
struct ChunkStateEntry {
  HumanBytes size;
  HumanBytes requested;
  bool in_use = false;
  std::optional<int> bin_num;  // TF 1.x lacks the field
};

struct ChunkStateLine {
  int line = 0;
  ChunkStateEntry chunk;
  std::optional<ChunkStateEntry> prev;
  std::optional<ChunkStateEntry> next;
};

// `Bin for <HR rounded> was <HR bin size>, Chunk State:` and the free chunks it lists.
struct BinFor {
  int line = 0;
  HumanBytes rounded;
  HumanBytes bin_size;
  std::vector<ChunkStateLine> chunks;
};

// The three chunk-line layouts of §3.3 item 4.
enum class ChunkLayout {
  kTf1,             // "Chunk at 0x<p> of size N" / "Free  at 0x<p> of size N"
  kNextBeforeSize,  // "InUse at <p> next H of size N" (TF ~1.14-2.2, also Windows)
  kNextAfterSize,   // "InUse at <hex> of size N next H" (TF ~2.3+, HEAD)
};

struct Chunk {
  int line = 0;
  ChunkLayout layout = ChunkLayout::kNextAfterSize;
  uint64_t addr = 0;
  uint64_t size = 0;
  bool in_use = false;
  std::optional<uint64_t> next;  // handle of the next chunk; SIZE_MAX ends a region
  std::optional<uint64_t> freed_at_count;
  std::string op;   // MEM_DEBUG builds: "by op <op>"
  std::string tag;  // HEAD: lower | upper | central_gap
};

inline constexpr uint64_t kNoNextChunk = UINT64_MAX;  // "next 18446744073709551615"

// `Next region of size N` and the chunk lines under it. TF <= 1.13 prints no
// region lines; its chunks go into one region whose size is unknown.
struct Region {
  int line = 0;
  std::optional<uint64_t> size;
  std::vector<Chunk> chunks;
};

// `<count> Chunks of size <size> totalling <HR>`
struct SummaryLine {
  int line = 0;
  uint64_t count = 0;
  uint64_t size = 0;
  HumanBytes total;
};

// `Total bytes in pool: P memory_limit_: L available bytes: A curr_region_allocation_bytes_: C`
// (TF ~1.14-2.11 call the first field total_region_allocated_bytes_).
struct PoolLine {
  int line = 0;
  bool legacy_name = false;
  uint64_t pool_bytes = 0;
  uint64_t memory_limit = 0;
  uint64_t available = 0;
  uint64_t curr_region_allocation_bytes = 0;
};

// HEAD's "Allocator memory summary: rounded request HR, total free in pool HR,
// largest free chunk usable by lower end HR, unallocated bytes HR, pool size HR,
// pool limit HR" (every value human-readable, so approximate).
struct HeadMemorySummary {
  HumanBytes rounded;
  HumanBytes free;
  HumanBytes largest_free;
  HumanBytes unallocated;
  HumanBytes pool;
  HumanBytes limit;
};

// AllocatorStats::DebugString: 5 lines (TF <= 2.3), 8 lines (REF), or HEAD's
// human-readable values (then the byte fields are approximate).
struct Stats {
  int lines = 0;
  bool human_readable = false;
  std::optional<uint64_t> limit;
  std::optional<uint64_t> in_use;
  std::optional<uint64_t> max_in_use;
  std::optional<uint64_t> num_allocs;
  std::optional<uint64_t> max_alloc_size;
  std::optional<uint64_t> reserved;
  std::optional<uint64_t> peak_reserved;
  std::optional<uint64_t> largest_free_block;
};

struct BfcDump {
  int first_line = 0;
  int last_line = 0;
  std::optional<Header> header;
  std::string allocator;  // from the header or the "BFCAllocator dump for" title
  bool has_title = false;
  std::vector<BinLine> bins;
  std::vector<BinFor> bin_for;
  std::vector<Region> regions;
  bool has_summary_title = false;
  std::vector<SummaryLine> summary;
  std::optional<HumanBytes> sum_total;
  std::optional<PoolLine> pool;
  std::vector<std::string> head_summary;  // HEAD "Allocator memory summary: ..." lines, verbatim
  std::optional<HeadMemorySummary> head_memory;
  Stats stats;
  std::optional<std::string> occupancy;
  // Lines missing inside the dump: "[...]" cuts, window separators, and lines
  // that match nothing (e.g. "... A very long repetition of this message").
  int truncated_lines = 0;
  int gaps = 0;
  bool chunk_list_interrupted = false;  // a gap fell inside the chunk list

  size_t ChunkCount() const {
    size_t n = 0;
    for (const Region& r : regions) n += r.chunks.size();
    return n;
  }
};

// "failed to allocate 8.41G (9029127168 bytes) from device: ..." (the
// sub-allocator, one line per Extend attempt).
struct SubAllocatorFailure {
  int line = 0;
  uint64_t bytes = 0;
};

// The non-dumping "The caller indicates that this is not a failure" warning.
struct NotAFailureWarning {
  int line = 0;
  std::string allocator;
  HumanBytes request;
  std::optional<uint64_t> freed_by_count;
};

// "Created [TensorFlow] device .../device:GPU:0 with 3340 MB memory": the
// device's memory limit as TF prints it, in MiB (memory_limit >> 20) although
// the text says MB.
struct DeviceCreated {
  int line = 0;
  std::string device;  // "GPU:0"; empty when the line names none
  uint64_t mib = 0;
};

// "OOM when allocating tensor with shape[32,30,30,1] and type float on ...
// by allocator GPU_0_bfc" (op_kernel.cc's OP_REQUIRES line, or the Python
// ResourceExhaustedError): the tensor whose allocation failed.
struct TensorOom {
  int line = 0;
  std::string shape;      // "[32,30,30,1]" as printed
  std::string dtype;      // "float"; empty when absent
  std::string allocator;  // "GPU_0_bfc"; empty when absent
};

// Everything found in one log file. Several dumps in one log stay separate.
struct BfcLog {
  std::string source;
  std::vector<BfcDump> dumps;
  std::vector<NotAFailureWarning> not_a_failure;
  std::vector<SubAllocatorFailure> sub_allocator_failures;
  std::vector<DeviceCreated> devices;
  std::vector<TensorOom> tensor_ooms;
  int gc_warnings = 0;
  int lines = 0;
  int comment_lines = 0;             // '#' lines (window separators included)
  int truncated_lines = 0;           // lines cut at "[...]"
  int unmatched_lines = 0;           // lines that are no part of a BFC dump
  std::vector<int> first_unmatched;  // line numbers of the first few
};

}  // namespace hbmsim::trace::bfc_dump

#endif  // HBMSIM_TRACE_BFC_DUMP_DUMP_H_
