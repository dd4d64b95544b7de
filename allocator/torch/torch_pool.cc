#include "allocator/torch/torch_pool.h"

#include <algorithm>
#include <utility>

#include "allocator/core/dcheck.h"

namespace hbmsim::allocator::torch {

FreePool& FreePool::operator=(const FreePool& other) {
  if (this == &other) return *this;
  streams_.clear();
  for (const StreamBins& s : other.streams_) {
    auto bins = std::make_unique<allocator::BinIndex>();
    for (int b = 0; b < allocator::kNumBins; ++b) {
      if (!s.bins->empty(b)) s.bins->ForEach(b, [&](const PoolEntry& e) { bins->Insert(b, e); });
    }
    streams_.push_back(StreamBins{s.stream, std::move(bins)});
  }
  expandable_ = other.expandable_;
  return *this;
}

void FreePool::Remove(uint64_t stream, uint64_t size, uint64_t addr, bool expandable) {
  allocator::BinIndex* bins = Find(stream);
  const int b = allocator::BinNumForSize(Bytes(size));
  // BinIndex::Remove takes whatever sits at the key's place; a block that is
  // not pooled would corrupt the index (std::set::erase would do nothing).
  HBMSIM_DCHECK(bins != nullptr && bins->Find(b, size, addr) != nullptr, "erase of a block not in the pool");
  bins->Remove(b, size, addr);
  expandable_ -= expandable ? 1 : 0;
}

std::vector<PoolEntry> FreePool::StreamEntries(uint64_t stream) const {
  std::vector<PoolEntry> out;
  const allocator::BinIndex* bins = Find(stream);
  if (bins == nullptr) return out;
  out.reserve(bins->size());
  for (int b = 0; b < allocator::kNumBins; ++b) {
    if (!bins->empty(b)) bins->ForEach(b, [&](const PoolEntry& e) { out.push_back(e); });
  }
  return out;
}

uint64_t FreePool::size() const {
  uint64_t n = 0;
  for (const StreamBins& s : streams_) n += s.bins->size();
  return n;
}

absl::Status FreePool::CheckInvariants() const {
  for (size_t i = 0; i < streams_.size(); ++i) {
    if (i > 0 && streams_[i - 1].stream >= streams_[i].stream) {
      return absl::InternalError("torch pool: streams out of order");
    }
    if (absl::Status s = streams_[i].bins->CheckInvariants(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

allocator::BinIndex& FreePool::AddStream(uint64_t stream) {
  auto at = std::lower_bound(streams_.begin(), streams_.end(), stream,
                             [](const StreamBins& s, uint64_t v) { return s.stream < v; });
  if (at == streams_.end() || at->stream != stream) {
    at = streams_.insert(at, StreamBins{stream, std::make_unique<allocator::BinIndex>()});
  }
  return *at->bins;
}

}  // namespace hbmsim::allocator::torch
