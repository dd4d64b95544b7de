// A recycling pool for the nodes of the BFC bins' ordered sets.
//
// Why: a std::set allocates one node per insert and frees it per erase, so a
// replay would call the heap on every alloc and free. The bins insert and erase
// free chunks constantly, but the number of free chunks at any moment is small
// and bounded by the number of chunks, so nodes are recycled through a free
// list and fresh ones are carved from slabs. The pool only grows with the peak
// number of free chunks, never with the memory limit.
#ifndef HBMSIM_ALLOCATOR_BFC_NODE_POOL_H_
#define HBMSIM_ALLOCATOR_BFC_NODE_POOL_H_

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace hbmsim::bfc {

// Hands out fixed-size blocks. The block size is fixed by the first request;
// requests of another size (never made by a node-based set) go to the heap.
class NodePool {
 public:
  NodePool() = default;
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;

  void* Take(std::size_t bytes) {
    if (node_bytes_ == 0) node_bytes_ = RoundToAlignment(bytes);
    if (RoundToAlignment(bytes) != node_bytes_) return ::operator new(bytes);
    if (free_list_ == nullptr) AddSlab();
    FreeNode* node = free_list_;
    free_list_ = node->next;
    return node;
  }

  void Give(void* p, std::size_t bytes) {
    if (RoundToAlignment(bytes) != node_bytes_) return ::operator delete(p);
    auto* node = static_cast<FreeNode*>(p);
    node->next = free_list_;
    free_list_ = node;
  }

  // Host bytes the pool holds (for the footprint estimate).
  std::size_t footprint_bytes() const { return slabs_.size() * kNodesPerSlab * node_bytes_; }

 private:
  struct FreeNode {
    FreeNode* next;
  };
  static constexpr std::size_t kNodesPerSlab = 256;

  static std::size_t RoundToAlignment(std::size_t bytes) {
    constexpr std::size_t a = alignof(std::max_align_t);
    const std::size_t at_least = bytes < sizeof(FreeNode) ? sizeof(FreeNode) : bytes;
    return (at_least + a - 1) / a * a;
  }

  void AddSlab() {
    slabs_.push_back(std::make_unique<std::byte[]>(kNodesPerSlab * node_bytes_));
    std::byte* base = slabs_.back().get();
    for (std::size_t i = kNodesPerSlab; i-- > 0;) {
      auto* node = reinterpret_cast<FreeNode*>(base + i * node_bytes_);
      node->next = free_list_;
      free_list_ = node;
    }
  }

  std::size_t node_bytes_ = 0;
  FreeNode* free_list_ = nullptr;
  std::vector<std::unique_ptr<std::byte[]>> slabs_;
};

// A standard allocator over a shared NodePool (stateful; equal iff same pool).
template <typename T>
class PoolAllocator {
 public:
  using value_type = T;

  explicit PoolAllocator(NodePool* pool) : pool_(pool) {}
  template <typename U>
  PoolAllocator(const PoolAllocator<U>& other) : pool_(other.pool()) {}  // NOLINT: rebinding

  T* allocate(std::size_t n) { return static_cast<T*>(pool_->Take(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) { pool_->Give(p, n * sizeof(T)); }

  NodePool* pool() const { return pool_; }
  template <typename U>
  bool operator==(const PoolAllocator<U>& o) const {
    return pool_ == o.pool();
  }

 private:
  NodePool* pool_;
};

}  // namespace hbmsim::bfc

#endif  // HBMSIM_ALLOCATOR_BFC_NODE_POOL_H_
