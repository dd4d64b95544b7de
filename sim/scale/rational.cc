#include "sim/scale/rational.h"

#include <algorithm>

namespace hbmsim::sim::scale {
namespace {

using Int = Rational::Int;

Int Gcd(Int a, Int b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    const Int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

std::optional<Int> MulChecked(Int a, Int b) {
  Int out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::optional<Int> AddChecked(Int a, Int b) {
  Int out;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

}  // namespace

std::optional<Rational> Rational::Make(Int num, Int den) {
  if (den == 0) return std::nullopt;
  if (den < 0) {
    num = -num;
    den = -den;
  }
  const Int g = Gcd(num, den);
  Rational r;
  r.num_ = g == 0 ? 0 : num / g;
  r.den_ = g == 0 ? 1 : den / g;
  return r;
}

std::optional<Rational> Add(const Rational& a, const Rational& b) {
  // a/b + c/d over the least common denominator keeps the numbers small.
  const Int g = Gcd(a.den_, b.den_);
  const std::optional<Int> left = MulChecked(a.num_, b.den_ / g);
  const std::optional<Int> right = MulChecked(b.num_, a.den_ / g);
  const std::optional<Int> den = MulChecked(a.den_ / g, b.den_);
  if (!left || !right || !den) return std::nullopt;
  const std::optional<Int> num = AddChecked(*left, *right);
  if (!num) return std::nullopt;
  return Rational::Make(*num, *den);
}

std::optional<Rational> Sub(const Rational& a, const Rational& b) {
  Rational negated = b;
  negated.num_ = -b.num_;
  return Add(a, negated);
}

std::optional<Rational> Mul(const Rational& a, const Rational& b) {
  // Cross-reduce first so that products of reduced fractions rarely overflow.
  const Int g1 = std::max<Int>(Gcd(a.num_, b.den_), 1);
  const Int g2 = std::max<Int>(Gcd(b.num_, a.den_), 1);
  const std::optional<Int> num = MulChecked(a.num_ / g1, b.num_ / g2);
  const std::optional<Int> den = MulChecked(a.den_ / g2, b.den_ / g1);
  if (!num || !den) return std::nullopt;
  return Rational::Make(*num, *den);
}

std::optional<Rational> Div(const Rational& a, const Rational& b) {
  if (b.num_ == 0) return std::nullopt;
  Rational inverse;
  inverse.num_ = b.den_;
  inverse.den_ = b.num_;
  if (inverse.den_ < 0) {
    inverse.num_ = -inverse.num_;
    inverse.den_ = -inverse.den_;
  }
  return Mul(a, inverse);
}

Int Rational::Ceil() const {
  Int q = num_ / den_;  // truncates toward zero
  if (num_ % den_ != 0 && num_ > 0) ++q;
  return q;
}

std::string Int128Text(Int v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  std::string digits;
  while (v != 0) {
    const int d = static_cast<int>(v % 10);
    digits.push_back(static_cast<char>('0' + (d < 0 ? -d : d)));
    v /= 10;
  }
  if (negative) digits.push_back('-');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

std::string Rational::Text() const {
  if (den_ == 1) return Int128Text(num_);
  return Int128Text(num_) + "/" + Int128Text(den_);
}

}  // namespace hbmsim::sim::scale
