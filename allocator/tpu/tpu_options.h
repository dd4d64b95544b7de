// Typed options of the `tpu` policy. The sim layer builds this struct from a
// YAML preset or --set flags; the policy never sees either.
//
// Every option below that is not Google-documented behaviour is marked
// "assumption"; docs/tpu-model.md lists them with their sources.
#ifndef HBMSIM_ALLOCATOR_TPU_TPU_OPTIONS_H_
#define HBMSIM_ALLOCATOR_TPU_TPU_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "allocator/core/units.h"

namespace hbmsim::allocator {

// Which resident program rung 3 evicts first. Google does not document the
// order (tpu-and-xla.md §1.2), so both are assumptions.
enum class EvictionOrder : uint8_t {
  kLru,           // least recently loaded or run first (default)
  kLargestFirst,  // largest reservation first; ties: least recently used
};
std::string_view EvictionOrderName(EvictionOrder o);  // "lru", "largest_first"
std::optional<EvictionOrder> ParseEvictionOrder(std::string_view name);

struct TpuOptions {
  Bytes hbm_bytes = Bytes::GiB(16);  // the HBM of one device (`bytes_limit`)
  // Allocation quantum; Google says one exists but not its value (assumption).
  Bytes granule = Bytes(512);
  // Pad shaped buffers to the TPU tile layout ([doc] E1000 "typically 128 / 8").
  bool tile_padding = true;
  // Rung 1: complete queued deallocations and retry ([doc] E0100).
  bool queued_free_retry = true;
  // Rung 2: compact live buffers toward the top and retry ([doc] E0100).
  bool defragment = true;
  // Rung 3: evict resident programs ([doc] E0100/E0101: buffers have priority).
  bool evict_programs = true;
  EvictionOrder eviction_order = EvictionOrder::kLru;
  // Keep a snapshot of every live buffer and program at each failure
  // (libtpu's `tpu_log_allocations_on_oom`; its format is not public).
  bool log_allocations_on_oom = false;
};

// OkStatus, or which option is unusable and why (messages name the option).
absl::Status ValidateTpuOptions(const TpuOptions& o);

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_TPU_TPU_OPTIONS_H_
