// Strong unit types for byte counts, device addresses and identifiers.
//
// Every quantity that crosses a module boundary has its own type, so a size can
// never be passed where an address or an id is expected (TCMalloc's lesson).
// Arithmetic on Bytes never wraps: sums and round-ups saturate at Bytes::Max(),
// which no limit can hold, so an absurd request fails as `oom` instead of
// "succeeding" with a wrapped size. The few unchecked operations (a
// subtraction whose caller guarantees the order) are HBMSIM_DCHECKed in the
// sanitizer build (dcheck.h).
#ifndef HBMSIM_ALLOCATOR_CORE_UNITS_H_
#define HBMSIM_ALLOCATOR_CORE_UNITS_H_

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>

#include "allocator/core/dcheck.h"

namespace hbmsim::allocator {

// A count of bytes. Unsigned 64-bit; saturating addition and rounding.
class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(uint64_t v) : v_(v) {}
  static constexpr Bytes Max() { return Bytes(std::numeric_limits<uint64_t>::max()); }
  static constexpr Bytes KiB(uint64_t n) { return Bytes(n << 10); }
  static constexpr Bytes MiB(uint64_t n) { return Bytes(n << 20); }
  static constexpr Bytes GiB(uint64_t n) { return Bytes(n << 30); }

  constexpr uint64_t value() const { return v_; }
  constexpr bool is_zero() const { return v_ == 0; }
  constexpr auto operator<=>(const Bytes&) const = default;

  // Saturating: never wraps past Max().
  constexpr Bytes operator+(Bytes o) const { return Bytes(v_ > Max().v_ - o.v_ ? Max().v_ : v_ + o.v_); }
  // Callers must ensure o <= *this; checked by the policies' invariants.
  constexpr Bytes operator-(Bytes o) const {
    HBMSIM_DCHECK(o.v_ <= v_, "Bytes subtraction would wrap");
    return Bytes(v_ - o.v_);
  }
  constexpr Bytes& operator+=(Bytes o) { return *this = *this + o; }
  constexpr Bytes& operator-=(Bytes o) { return *this = *this - o; }
  // a - b, or zero when b > a.
  constexpr Bytes SaturatingSub(Bytes o) const { return Bytes(v_ > o.v_ ? v_ - o.v_ : 0); }

  // Rounds up to a multiple of `granule` (> 0), saturating at Max().
  constexpr Bytes RoundUp(uint64_t granule) const {
    HBMSIM_DCHECK(granule > 0, "RoundUp to a granule of 0");
    const uint64_t rem = v_ % granule;
    if (rem == 0) return *this;
    const uint64_t pad = granule - rem;
    return Bytes(v_ > Max().v_ - pad ? Max().v_ : v_ + pad);
  }
  constexpr Bytes RoundDown(uint64_t granule) const {
    HBMSIM_DCHECK(granule > 0, "RoundDown to a granule of 0");
    return Bytes(v_ - v_ % granule);
  }

 private:
  uint64_t v_ = 0;
};

// A simulated device address. Offsets are absolute (the device hands out
// regions starting at 0), so an Offset prints as the address users compare.
class Offset {
 public:
  constexpr Offset() = default;
  constexpr explicit Offset(uint64_t v) : v_(v) {}
  constexpr uint64_t value() const { return v_; }
  constexpr auto operator<=>(const Offset&) const = default;
  constexpr Offset operator+(Bytes b) const {
    HBMSIM_DCHECK(b.value() <= std::numeric_limits<uint64_t>::max() - v_, "address past 2^64");
    return Offset(v_ + b.value());
  }
  constexpr Offset operator-(Bytes b) const {
    HBMSIM_DCHECK(b.value() <= v_, "address below 0");
    return Offset(v_ - b.value());
  }
  // Distance between two addresses; requires o <= *this.
  constexpr Bytes operator-(Offset o) const {
    HBMSIM_DCHECK(o.v_ <= v_, "distance to a higher address");
    return Bytes(v_ - o.v_);
  }

 private:
  uint64_t v_ = 0;
};

// An integer identifier that cannot be confused with other identifiers.
template <typename Tag, typename Rep = uint64_t>
class StrongId {
 public:
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : v_(v) {}
  constexpr Rep value() const { return v_; }
  constexpr auto operator<=>(const StrongId&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, StrongId id) {
    return H::combine(std::move(h), id.v_);
  }

 private:
  Rep v_{};
};

struct BufferIdTag {};
struct ProgramIdTag {};
struct StreamIdTag {};
struct DeviceIdTag {};
struct EventIndexTag {};

using BufferId = StrongId<BufferIdTag>;      // `alloc <id>` in a trace
using ProgramId = StrongId<ProgramIdTag>;    // `program_load <pid>`
using StreamId = StrongId<StreamIdTag>;      // `stream=<n>`
using DeviceId = StrongId<DeviceIdTag>;      // `device=<n>`
using EventIndex = StrongId<EventIndexTag>;  // 0-based position among event lines

// A policy's own name for a live block (a chunk handle, a block index...).
// Only the policy that issued it can interpret it; the replay engine stores it.
struct HandleTag {};
using Handle = StrongId<HandleTag>;

}  // namespace hbmsim::allocator

template <typename Tag, typename Rep>
struct std::hash<hbmsim::allocator::StrongId<Tag, Rep>> {
  size_t operator()(hbmsim::allocator::StrongId<Tag, Rep> id) const { return std::hash<Rep>()(id.value()); }
};

#endif  // HBMSIM_ALLOCATOR_CORE_UNITS_H_
