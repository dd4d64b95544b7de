// Policies that keep their blocks as records in one vector, linked by index
// (best_fit's BestFitBlocks, cuda_async's blocks), reuse the records of
// dropped blocks before growing the vector: a split costs no allocation once
// the trace has reached its most blocks.
#ifndef HBMSIM_ALLOCATOR_CORE_BLOCK_RECORDS_H_
#define HBMSIM_ALLOCATOR_CORE_BLOCK_RECORDS_H_

#include <cstdint>
#include <vector>

namespace hbmsim::allocator {

// The index of a record for a new block: the last spare one, else a new one
// at the end (which may move every record: hold no reference across it).
// The record keeps whatever it held; the caller overwrites it.
template <typename Record>
uint32_t NewBlockRecord(std::vector<Record>& records, std::vector<uint32_t>& spare) {
  if (!spare.empty()) {
    const uint32_t id = spare.back();
    spare.pop_back();
    return id;
  }
  records.emplace_back();
  return static_cast<uint32_t>(records.size() - 1);
}

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_CORE_BLOCK_RECORDS_H_
