// LiveIdTable: the map from a live buffer's or program's id to what the
// replay remembers about it, used on every alloc and free by the trace
// validator and by the replay engine, so it is built for exactly that load:
//
//   used_:  [ 0 |  1 |  1 | 0 | 0 |  1 | 0 |  1 ]
//   slots_: [ . | k7 | k8 | . | . | k3 | . | k4 ]   capacity a power of two,
//            linear probing from the key's home slot, at most 1/8 full up
//            to 2^17 slots and at most half full beyond (see MaxSize).
//
// Erase shifts the following run back (no tombstones), so a table that sees
// ids come and go forever never degrades and never rehashes: once it has
// grown to the trace's largest live set it allocates nothing. Ids are
// arbitrary 64-bit values, so the home slot comes from a multiplicative mix
// of the key with a per-table seed (a crafted trace cannot aim every id at one
// slot without knowing it). Only a snapshot iterates the table (ForEach), and
// a snapshot is loaded back by TryInsert, whose lookups are the same in any
// order: no result can depend on the slots' order.
//
// Keys that are small numbers handed out again as soon as they are given
// back (the buffer numbers of a `size` log, sim/whatif/event_log.h) need no
// mix: after KeysAreHomes() key k's home is slot 2k (modulo the capacity),
// so the live set keeps to the first slots of the table, each lookup reads
// a slot recent ones left in cache, and with every other slot empty a run is
// one entry long, so an erase moves nothing. It is the same multiply and
// shift as the mix, with another factor: a table of ids pays nothing for it.
#ifndef HBMSIM_TRACE_CORE_LIVE_ID_TABLE_H_
#define HBMSIM_TRACE_CORE_LIVE_ID_TABLE_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace hbmsim::trace {

// A buffer or program id qualified by its device (the validator's key).
struct DeviceScopedId {
  uint64_t device = 0;
  uint64_t id = 0;
  friend bool operator==(const DeviceScopedId&, const DeviceScopedId&) = default;
};

inline uint64_t LiveIdBits(uint64_t key) { return key; }
inline uint64_t LiveIdBits(const DeviceScopedId& key) {
  // Device 0 is the common case; other devices move the id to another stream.
  return key.id ^ (key.device * 0xC2B2AE3D27D4EB4Full);
}

template <typename Key, typename Value>
class LiveIdTable {
 public:
  LiveIdTable() : seed_(SeedFor(this)) {
    slots_.resize(kMinCapacity);
    used_.resize(kMinCapacity);
  }

  size_t size() const { return size_; }

  // From now on key k's home slot is 2k (see the top): for keys numbered
  // densely from 0 by their maker, never for ids a trace chose (a key past
  // half the capacity wraps around and probes like any other). Only on an
  // empty table.
  void KeysAreHomes() {
    if (size_ != 0) return;
    keys_are_homes_ = true;
    seed_ = 0;
    factor_ = HomeFactor();
  }

  Value* Find(const Key& key) { return const_cast<Value*>(std::as_const(*this).Find(key)); }
  const Value* Find(const Key& key) const {
    for (size_t i = Home(key);; i = (i + 1) & mask()) {
      if (!used_[i]) return nullptr;
      if (slots_[i].key == key) return &slots_[i].value;
    }
  }

  // Inserts key -> value unless the key is present. Returns the stored value
  // and whether it was inserted (false: the existing value, unchanged).
  std::pair<Value*, bool> TryInsert(const Key& key, const Value& value) {
    if (size_ == max_size_) [[unlikely]]
      Grow();
    size_t i = Home(key);
    for (; used_[i]; i = (i + 1) & mask()) {
      if (slots_[i].key == key) return {&slots_[i].value, false};
    }
    Slot& s = slots_[i];
    s.value = value;
    s.key = key;
    used_[i] = 1;
    ++size_;
    return {&s.value, true};
  }

  // Every entry, in slot order (see the top: for snapshots only).
  template <typename F>
  void ForEach(F&& f) const {
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (used_[i]) f(slots_[i].key, slots_[i].value);
    }
  }

  // Removes the entry whose value `value` points at (from Find/TryInsert,
  // with no insert or erase since).
  void Erase(Value* value) {
    size_t hole = SlotIndex(value);
    // Move back every later entry of the run that may live in the hole: one
    // whose home is not cyclically in (hole, j].
    for (size_t j = (hole + 1) & mask(); used_[j]; j = (j + 1) & mask()) {
      const size_t home = Home(slots_[j].key);
      if (((j - home) & mask()) >= ((j - hole) & mask())) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    used_[hole] = 0;
    --size_;
  }

  bool Erase(const Key& key) {
    Value* v = Find(key);
    if (v == nullptr) return false;
    Erase(v);
    return true;
  }

 private:
  static constexpr size_t kMinCapacity = 16;
  // Up to this many slots the table stays at most 1/8 full, beyond it 1/2.
  static constexpr size_t kSparseSlots = size_t{1} << 17;

  // How many entries `capacity` slots may hold. Sparse while small: at half
  // load a lookup or an erase walks a run of a varying length, and each walk's
  // exit is a branch no predictor guesses (a 10 M-event replay ran 1.4x
  // faster at 1/8). At 2^17 slots that costs a few MB; a larger live set
  // keeps to half load, so memory stays two slots per live id.
  static size_t MaxSize(size_t capacity) { return capacity < kSparseSlots ? capacity / 8 : capacity / 2; }

  // The value first, so a pointer to it is a pointer to its slot. Whether a
  // slot is used lives apart, in used_: one byte a slot keeps that array
  // within the L1 cache for the live sets replays see, so probing past empty
  // slots reads no slot, and a slot without the flag is 32 bytes for the
  // engine's records (40 with it, and then over a third of the slots
  // straddled two cache lines).
  struct Slot {
    Value value{};
    Key key{};
  };
  static_assert(std::is_standard_layout_v<Slot>);

  static uint64_t SeedFor(const void* self) {
    return (reinterpret_cast<uintptr_t>(self) | 1) * 0x9E3779B97F4A7C15ull;
  }
  size_t mask() const { return slots_.size() - 1; }
  size_t Home(const Key& key) const {
    const uint64_t h = (LiveIdBits(key) ^ seed_) * factor_;
    return static_cast<size_t>(h >> shift_);
  }
  size_t SlotIndex(const Value* value) const {
    return static_cast<size_t>(reinterpret_cast<const Slot*>(value) - slots_.data());
  }

  // The mix's factor, or for keys as homes the one that makes (k · factor)
  // >> shift_ equal 2k modulo the capacity: 2^(shift_ + 1).
  static constexpr uint64_t kMixFactor = 0x9E3779B97F4A7C15ull;
  uint64_t HomeFactor() const { return keys_are_homes_ ? uint64_t{2} << shift_ : kMixFactor; }

  [[gnu::noinline]] void Grow() {
    std::vector<Slot> old(slots_.size() * 2);
    std::vector<uint8_t> old_used(old.size());
    old.swap(slots_);
    old_used.swap(used_);
    shift_ = 64 - std::countr_zero(slots_.size());
    factor_ = HomeFactor();
    max_size_ = MaxSize(slots_.size());
    size_ = 0;
    for (size_t i = 0; i < old.size(); ++i) {
      if (old_used[i]) TryInsert(old[i].key, old[i].value);
    }
  }

  std::vector<Slot> slots_;
  std::vector<uint8_t> used_;  // 1 iff slots_[i] holds an entry
  size_t size_ = 0;
  size_t max_size_ = MaxSize(kMinCapacity);  // entries allowed before the next Grow
  int shift_ = 64 - std::countr_zero(kMinCapacity);
  uint64_t seed_;
  uint64_t factor_ = kMixFactor;
  bool keys_are_homes_ = false;
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_CORE_LIVE_ID_TABLE_H_
