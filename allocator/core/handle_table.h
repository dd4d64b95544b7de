// HandleTable: handle → block index of a policy's live blocks (torch's
// active blocks, cuda_async's in-use and queued ones).
//
//   slots_: [ h=1025 | h=2 | . | h=1027 | h=4 | ... ]   capacity a power of two
//             home slot of h = h mod capacity; linear probing; at most 1/4 full
//
// The policy issues consecutive handles (torch from 1, cuda_async from 0) and
// frees them in any order. An absl::flat_hash_map hashed every handle to a
// random slot: ~40 instructions and most of a cache miss per lookup, insert or
// erase, three of them per allocation's life. Here the home slot is the handle
// itself: live handles, mostly recent, sit side by side, so a lookup reads one
// warm cache line and hashes nothing. Erase shifts the rest of the run back (no
// tombstones), so a table that sees handles come and go forever never degrades;
// it doubles when a quarter full and never shrinks. Live handles are
// consecutive, so runs are long, and walking one to its end on every erase was
// a mispredicted exit each time; but a handle sits in its home slot unless an
// older live handle took it, which is rare, so the table counts the entries
// that do not, and with none an erase only clears its slot. Nothing iterates
// it, so no result can depend on its order. An empty slot holds ~0 (kNoHandle,
// kNullHandle), which no policy issues: handle 0 is an ordinary key.
#ifndef HBMSIM_ALLOCATOR_CORE_HANDLE_TABLE_H_
#define HBMSIM_ALLOCATOR_CORE_HANDLE_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace hbmsim::allocator {

class HandleTable {
 public:
  HandleTable() : slots_(kMinCapacity) {}

  size_t size() const { return size_; }

  // The block of handle h, or nullptr.
  uint32_t* Find(uint64_t h) { return const_cast<uint32_t*>(std::as_const(*this).Find(h)); }
  const uint32_t* Find(uint64_t h) const {
    if (h == kEmpty) return nullptr;
    for (size_t i = h & mask();; i = (i + 1) & mask()) {
      if (slots_[i].key == h) return &slots_[i].value;
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }
  bool contains(uint64_t h) const { return Find(h) != nullptr; }

  // h (not ~0) must not be in the table.
  void Insert(uint64_t h, uint32_t value) {
    if (4 * (size_ + 1) > slots_.size()) [[unlikely]]
      Grow();
    const size_t home = h & mask();
    size_t i = home;
    while (slots_[i].key != kEmpty) i = (i + 1) & mask();
    slots_[i] = Slot{h, value};
    ++size_;
    displaced_ += i != home ? 1 : 0;
  }

  void Erase(uint64_t h) {
    if (h == kEmpty) return;
    size_t hole = h & mask();
    while (slots_[hole].key != h) {
      if (slots_[hole].key == kEmpty) return;
      hole = (hole + 1) & mask();
    }
    --size_;
    if (displaced_ == 0) [[likely]] {  // no entry can need the hole
      slots_[hole] = Slot{};
      return;
    }
    if ((h & mask()) != hole) --displaced_;
    // Move back every later entry of the run that may live in the hole: one
    // whose home is not cyclically in (hole, j].
    for (size_t j = (hole + 1) & mask(); slots_[j].key != kEmpty; j = (j + 1) & mask()) {
      const size_t home = slots_[j].key & mask();
      if (((j - home) & mask()) >= ((j - hole) & mask())) {
        slots_[hole] = slots_[j];
        displaced_ -= home == hole ? 1 : 0;  // it moved home
        hole = j;
      }
    }
    slots_[hole] = Slot{};
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // kNoHandle
  static constexpr size_t kMinCapacity = 64;
  struct Slot {
    uint64_t key = kEmpty;
    uint32_t value = 0;
  };
  size_t mask() const { return slots_.size() - 1; }

  [[gnu::noinline]] void Grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    displaced_ = 0;
    for (const Slot& s : old) {
      if (s.key == kEmpty) continue;
      const size_t home = s.key & mask();
      size_t i = home;
      while (slots_[i].key != kEmpty) i = (i + 1) & mask();
      slots_[i] = s;
      displaced_ += i != home ? 1 : 0;
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  size_t displaced_ = 0;  // entries not in their home slot
};

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_CORE_HANDLE_TABLE_H_
