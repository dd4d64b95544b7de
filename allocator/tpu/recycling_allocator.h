// An allocator for node-based containers (absl::btree_*) that keeps freed
// nodes on a free list per size and hands them out again, so a replay in
// steady state makes no heap allocation: a btree splits and merges nodes as
// blocks come and go, and without this each split would call operator new.
//
// All copies and rebinds of one allocator share one pool (a shared_ptr), so a
// container copied from another draws from the same free lists. Memory is
// returned to the system when the last sharer goes away. Not thread-safe: a
// policy is driven by one thread.
#ifndef HBMSIM_ALLOCATOR_TPU_RECYCLING_ALLOCATOR_H_
#define HBMSIM_ALLOCATOR_TPU_RECYCLING_ALLOCATOR_H_

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace hbmsim::allocator {

class NodeFreeLists {
 public:
  NodeFreeLists() = default;
  NodeFreeLists(const NodeFreeLists&) = delete;
  NodeFreeLists& operator=(const NodeFreeLists&) = delete;
  ~NodeFreeLists() {
    for (auto& [bytes, nodes] : lists_) {
      for (void* p : nodes) ::operator delete(p);
    }
  }

  void* Take(size_t bytes) {
    std::vector<void*>& nodes = ListFor(bytes);
    if (nodes.empty()) return ::operator new(bytes);
    void* p = nodes.back();
    nodes.pop_back();
    return p;
  }
  void Give(void* p, size_t bytes) { ListFor(bytes).push_back(p); }

 private:
  // A btree uses two node sizes (leaf, internal): a linear scan is cheapest.
  std::vector<void*>& ListFor(size_t bytes) {
    for (auto& [size, nodes] : lists_) {
      if (size == bytes) return nodes;
    }
    return lists_.emplace_back(bytes, std::vector<void*>{}).second;
  }

  std::vector<std::pair<size_t, std::vector<void*>>> lists_;
};

template <typename T>
class RecyclingAllocator {
 public:
  using value_type = T;

  RecyclingAllocator() : pool_(std::make_shared<NodeFreeLists>()) {}
  template <typename U>
  RecyclingAllocator(const RecyclingAllocator<U>& other) : pool_(other.pool()) {}  // NOLINT: rebinding

  T* allocate(size_t n) { return static_cast<T*>(pool_->Take(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { pool_->Give(p, n * sizeof(T)); }

  const std::shared_ptr<NodeFreeLists>& pool() const { return pool_; }
  template <typename U>
  bool operator==(const RecyclingAllocator<U>& other) const {
    return pool_ == other.pool();
  }

 private:
  std::shared_ptr<NodeFreeLists> pool_;
};

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_TPU_RECYCLING_ALLOCATOR_H_
