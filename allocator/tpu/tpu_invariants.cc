// TpuAllocator::CheckInvariants: the shared tiling oracle, then a recount of
// every index and total the policy keeps (the equations in tpu_allocator.h).
#include <string>

#include "allocator/tpu/tpu_allocator.h"
#include "fmt/format.h"

namespace hbmsim::allocator {
namespace {

absl::Status Broken(std::string what) { return absl::InternalError(std::move(what)); }

}  // namespace

// One buffer or program block against the record that owns it; adds it to the recounts.
absl::Status TpuAllocator::CheckHeldBlock(const HbmLayout::Block& block, Recount& n) const {
  const uint64_t granule = options_.granule.value();
  const uint64_t offset = block.offset;
  if (offset % granule != 0 || block.size.value() % granule != 0) {
    return Broken(fmt::format("block at {} of {} B is not granule-aligned", offset, block.size.value()));
  }
  if (block.state == BlockState::kProgram) {
    auto it = programs_.find(ProgramId(block.owner));
    if (it == programs_.end() || !it->second.resident || it->second.offset.value() != offset ||
        &layout_.block(it->second.block) != &block || it->second.size != block.size) {
      return Broken(fmt::format("program block at {} does not match program {}", offset, block.owner));
    }
    if (!resident_.contains(offset))
      return Broken(fmt::format("program at {} missing from the index", offset));
    ++n.program_blocks;
    n.reserved += block.size;
    return absl::OkStatus();
  }
  // The owner is the handle, which names the block's Ref and the record filed there.
  const HbmLayout::Ref r = RefOf(block.owner);
  const bool queued_block = block.state == BlockState::kPendingFree;
  if (r >= buffers_.size() || buffers_[r].handle != block.owner || &layout_.block(r) != &block) {
    return Broken(fmt::format("buffer block at {} does not match handle {}", offset, block.owner));
  }
  ++n.buffer_blocks;
  n.held += block.size;
  n.padding += block.size.SaturatingSub(buffers_[r].requested);
  if (queued_block) {
    ++n.queued_blocks;
    n.queued += block.size;
  }
  return absl::OkStatus();
}

absl::Status TpuAllocator::CheckInvariants() const {
  if (absl::Status s = CheckMemoryMapTiling(*this); !s.ok()) return s;
  if (absl::Status s = layout_.Check(); !s.ok()) return s;
  Recount n;
  absl::Status broken;  // the first block that does not match, if any
  layout_.ForEach([&](const HbmLayout::Block& block) {
    if (broken.ok() && block.state != BlockState::kFree) broken = CheckHeldBlock(block, n);
  });
  if (!broken.ok()) return broken;
  const auto& [held, queued, reserved, padding, buffer_blocks, queued_blocks, program_blocks] = n;
  size_t live_records = 0;  // a record live for no block would pass the walk above
  for (const Buffer& b : buffers_) live_records += b.handle != kVacant ? 1 : 0;
  if (buffer_blocks != live_buffers_ || live_records != live_buffers_ || held != in_use_) {
    return Broken(fmt::format("{} buffer blocks hold {} B; the policy counts {} buffers ({} records), {} B",
                              buffer_blocks, held.value(), live_buffers_, live_records, in_use_.value()));
  }
  if (queued_blocks != queued_.size() || queued != queued_bytes_) {
    return Broken(fmt::format("{} queued blocks hold {} B; the queue has {} of {} B", queued_blocks,
                              queued.value(), queued_.size(), queued_bytes_.value()));
  }
  size_t resident_programs = 0;
  for (const auto& [pid, p] : programs_) resident_programs += p.resident ? 1 : 0;
  if (program_blocks != resident_.size() || program_blocks != resident_programs || reserved != reserved_) {
    return Broken(fmt::format("{} program blocks reserve {} B; the policy counts {} resident, {} B",
                              program_blocks, reserved.value(), resident_programs, reserved_.value()));
  }
  if (padding != padding_in_use_) {
    return Broken(
        fmt::format("live padding recounts to {} B, not {} B", padding.value(), padding_in_use_.value()));
  }
  if (peak_in_use_ < in_use_ || peak_reserved_ < reserved_)
    return Broken("a peak is below its current value");
  if (held + reserved + layout_.free_bytes() != options_.hbm_bytes) {
    return Broken("buffers + programs + free != hbm_bytes");
  }
  return absl::OkStatus();
}

}  // namespace hbmsim::allocator
