// An exact fraction of 128-bit integers, enough to solve for the coefficients
// of a size fit (sim/scale/size_fit.h) without floating-point guesswork: the
// sizes are at most 2^64 bytes and the parameter values small, so a 3x3
// elimination stays within 128 bits; every operation reports an overflow
// instead of wrapping, and the fit that overflowed is simply not taken.
#ifndef HBMSIM_SIM_SCALE_RATIONAL_H_
#define HBMSIM_SIM_SCALE_RATIONAL_H_

#include <cstdint>
#include <optional>
#include <string>

namespace hbmsim::sim::scale {

class Rational {
 public:
  using Int = __int128;

  Rational() = default;
  explicit Rational(Int whole) : num_(whole) {}
  // Reduced, with a positive denominator; nullopt when den is 0.
  static std::optional<Rational> Make(Int num, Int den);

  Int num() const { return num_; }
  Int den() const { return den_; }
  bool is_zero() const { return num_ == 0; }
  bool is_integer() const { return den_ == 1; }
  bool operator==(const Rational&) const = default;

  // nullopt on overflow (or division by zero).
  friend std::optional<Rational> Add(const Rational& a, const Rational& b);
  friend std::optional<Rational> Sub(const Rational& a, const Rational& b);
  friend std::optional<Rational> Mul(const Rational& a, const Rational& b);
  friend std::optional<Rational> Div(const Rational& a, const Rational& b);

  // The least integer >= this value.
  Int Ceil() const;
  // "3", "-7/2".
  std::string Text() const;

 private:
  Int num_ = 0;
  Int den_ = 1;
};

std::string Int128Text(Rational::Int v);

}  // namespace hbmsim::sim::scale

#endif  // HBMSIM_SIM_SCALE_RATIONAL_H_
