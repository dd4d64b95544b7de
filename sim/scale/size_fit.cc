#include "sim/scale/size_fit.h"

#include <vector>

#include "fmt/format.h"

namespace hbmsim::sim::scale {
namespace {

using Int = Rational::Int;

bool HasTerm(SizeForm f, int power) { return (static_cast<uint8_t>(f) >> power) & 1; }

std::optional<Rational> Power(uint64_t n, int power) {
  Int v = 1;
  for (int i = 0; i < power; ++i) {
    if (__builtin_mul_overflow(v, static_cast<Int>(n), &v)) return std::nullopt;
  }
  return Rational(v);
}

// The form's value at n with the given coefficients; nullopt on overflow.
std::optional<Rational> Evaluate(const SizeFit& fit, uint64_t n) {
  Rational sum;
  for (int power = 0; power < 3; ++power) {
    if (!HasTerm(fit.form, power)) continue;
    const std::optional<Rational> x = Power(n, power);
    if (!x) return std::nullopt;
    const std::optional<Rational> term = Mul(fit.coefficients[power], *x);
    if (!term) return std::nullopt;
    const std::optional<Rational> next = Add(sum, *term);
    if (!next) return std::nullopt;
    sum = *next;
  }
  return sum;
}

// Gauss-Jordan elimination of the square system rows[i] · x = rhs[i];
// nullopt when it is singular or overflows.
std::optional<std::vector<Rational>> Solve(std::vector<std::vector<Rational>> rows,
                                           std::vector<Rational> rhs) {
  const size_t p = rows.size();
  for (size_t col = 0; col < p; ++col) {
    size_t pivot = col;
    while (pivot < p && rows[pivot][col].is_zero()) ++pivot;
    if (pivot == p) return std::nullopt;
    std::swap(rows[pivot], rows[col]);
    std::swap(rhs[pivot], rhs[col]);
    for (size_t r = 0; r < p; ++r) {
      if (r == col || rows[r][col].is_zero()) continue;
      const std::optional<Rational> factor = Div(rows[r][col], rows[col][col]);
      if (!factor) return std::nullopt;
      for (size_t c = col; c < p; ++c) {
        const std::optional<Rational> scaled = Mul(*factor, rows[col][c]);
        if (!scaled) return std::nullopt;
        const std::optional<Rational> v = Sub(rows[r][c], *scaled);
        if (!v) return std::nullopt;
        rows[r][c] = *v;
      }
      const std::optional<Rational> scaled = Mul(*factor, rhs[col]);
      if (!scaled) return std::nullopt;
      const std::optional<Rational> v = Sub(rhs[r], *scaled);
      if (!v) return std::nullopt;
      rhs[r] = *v;
    }
  }
  std::vector<Rational> x(p);
  for (size_t i = 0; i < p; ++i) {
    const std::optional<Rational> v = Div(rhs[i], rows[i][i]);
    if (!v) return std::nullopt;
    x[i] = *v;
  }
  return x;
}

// The coefficients of `form` through the first CoefficientCount(form) points.
std::optional<SizeFit> Through(SizeForm form, std::span<const SizePoint> points) {
  std::vector<int> powers;
  for (int power = 0; power < 3; ++power) {
    if (HasTerm(form, power)) powers.push_back(power);
  }
  std::vector<std::vector<Rational>> rows;
  std::vector<Rational> rhs;
  for (size_t i = 0; i < powers.size(); ++i) {
    std::vector<Rational> row;
    for (int power : powers) {
      const std::optional<Rational> x = Power(points[i].n, power);
      if (!x) return std::nullopt;
      row.push_back(*x);
    }
    rows.push_back(std::move(row));
    rhs.push_back(Rational(static_cast<Int>(points[i].bytes)));
  }
  const std::optional<std::vector<Rational>> x = Solve(std::move(rows), std::move(rhs));
  if (!x) return std::nullopt;
  SizeFit fit{form, {}};
  for (size_t i = 0; i < powers.size(); ++i) fit.coefficients[powers[i]] = (*x)[i];
  return fit;
}

bool ExactOnAll(const SizeFit& fit, std::span<const SizePoint> points) {
  for (const SizePoint& p : points) {
    const std::optional<Rational> v = Evaluate(fit, p.n);
    if (!v || !(*v == Rational(static_cast<Int>(p.bytes)))) return false;
  }
  return true;
}

bool DistinctValues(std::span<const SizePoint> points) {
  for (size_t i = 0; i < points.size(); ++i) {
    for (size_t j = i + 1; j < points.size(); ++j) {
      if (points[i].n == points[j].n) return false;
    }
  }
  return true;
}

}  // namespace

std::string_view SizeFormName(SizeForm f) {
  switch (f) {
    case SizeForm::kConstant:
      return "c";
    case SizeForm::kLinear:
      return "c*n";
    case SizeForm::kQuadratic:
      return "c*n^2";
    case SizeForm::kAffine:
      return "a+b*n";
    case SizeForm::kAffineQuadratic:
      return "a+b*n^2";
    case SizeForm::kLinearQuadratic:
      return "b*n+c*n^2";
    case SizeForm::kFullQuadratic:
      return "a+b*n+c*n^2";
  }
  return "?";
}

int CoefficientCount(SizeForm f) { return __builtin_popcount(static_cast<uint8_t>(f)); }

std::string SizeFit::Text() const {
  static constexpr std::string_view kTerm[] = {"", "*n", "*n^2"};
  std::string out;
  for (int power = 0; power < 3; ++power) {
    if (!HasTerm(form, power)) continue;
    const Rational& c = coefficients[power];
    const std::string text = c.is_integer() ? c.Text() : fmt::format("({})", c.Text());
    if (!out.empty()) out += c.num() < 0 ? "" : "+";
    out += text;
    out += kTerm[power];
  }
  return out;
}

std::optional<SizeFit> FitSize(std::span<const SizePoint> points) {
  if (points.size() < 2 || !DistinctValues(points)) return std::nullopt;
  for (SizeForm form : kSizeForms) {
    const size_t count = static_cast<size_t>(CoefficientCount(form));
    if (points.size() <= count) continue;  // nothing would confirm it
    const std::optional<SizeFit> fit = Through(form, points);
    if (fit && ExactOnAll(*fit, points)) return fit;
  }
  return std::nullopt;
}

std::optional<uint64_t> PredictSize(const SizeFit& fit, uint64_t n) {
  const std::optional<Rational> v = Evaluate(fit, n);
  if (!v) return std::nullopt;
  const Int bytes = v->Ceil();
  if (bytes < 0 || bytes > static_cast<Int>(UINT64_MAX)) return std::nullopt;
  return static_cast<uint64_t>(bytes);
}

std::optional<uint64_t> GuessSize(std::span<const SizePoint> points, uint64_t n) {
  auto distance = [n](const SizePoint& p) { return p.n > n ? p.n - n : n - p.n; };
  auto nearer = [&](const SizePoint& a, const SizePoint& b) {
    return distance(a) != distance(b) ? distance(a) < distance(b) : a.n > b.n;
  };
  const SizePoint* first = nullptr;
  const SizePoint* second = nullptr;
  for (const SizePoint& p : points) {
    if (first == nullptr || nearer(p, *first)) {
      if (first == nullptr || first->n != p.n) second = first;
      first = &p;
    } else if (p.n != first->n && (second == nullptr || nearer(p, *second))) {
      second = &p;
    }
  }
  if (second == nullptr) return std::nullopt;
  const SizePoint line[] = {*first, *second};
  const std::optional<SizeFit> fit = Through(SizeForm::kAffine, line);
  if (!fit) return std::nullopt;
  return PredictSize(*fit, n);
}

}  // namespace hbmsim::sim::scale
