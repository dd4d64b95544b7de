// Each aligned allocation's requested size as a function of the size
// parameter n (a sequence length, a batch): the product forms a tensor's
// size takes, and sums of them,
//
//   c        weights, optimizer state, workspaces of fixed size
//   c*n      activations (batch x n x d_model x 4 bytes)
//   c*n^2    attention scores (batch x heads x n x n x 4 bytes)
//   a+b*n, a+b*n^2, b*n+c*n^2, a+b*n+c*n^2   concatenations, fused buffers
//
// solved exactly in rationals (sim/scale/rational.h) and taken only when it
// is exact on every given point AND at least one point more than it has
// coefficients confirms it: with two sizes any line fits, so a line through
// two points explains nothing and the allocation is counted unexplained. The
// simplest confirmed form wins (fewest coefficients, then the order above).
#ifndef HBMSIM_SIM_SCALE_SIZE_FIT_H_
#define HBMSIM_SIM_SCALE_SIZE_FIT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sim/scale/rational.h"

namespace hbmsim::sim::scale {

// In the order they are tried; the value is the mask of terms (1, n, n^2).
enum class SizeForm : uint8_t {
  kConstant = 0b001,
  kLinear = 0b010,
  kQuadratic = 0b100,
  kAffine = 0b011,
  kAffineQuadratic = 0b101,
  kLinearQuadratic = 0b110,
  kFullQuadratic = 0b111,
};
inline constexpr std::array<SizeForm, 7> kSizeForms = {
    SizeForm::kConstant,        SizeForm::kLinear,          SizeForm::kQuadratic,    SizeForm::kAffine,
    SizeForm::kAffineQuadratic, SizeForm::kLinearQuadratic, SizeForm::kFullQuadratic};

// "c", "c*n", "c*n^2", "a+b*n", "a+b*n^2", "b*n+c*n^2", "a+b*n+c*n^2".
std::string_view SizeFormName(SizeForm f);
// How many coefficients the form has (1 to 3).
int CoefficientCount(SizeForm f);

struct SizePoint {
  uint64_t n = 0;
  uint64_t bytes = 0;
};

struct SizeFit {
  SizeForm form = SizeForm::kConstant;
  std::array<Rational, 3> coefficients;  // of 1, n and n^2 (0 where the form has no term)
  // "4096*n^2" or "1024+64*n": the fit as a person writes it.
  std::string Text() const;
};

// The simplest form exact on every point and confirmed by a point more than
// it has coefficients; nullopt when none is (fewer than two points, two
// points with the same n, or sizes no confirmed form explains).
std::optional<SizeFit> FitSize(std::span<const SizePoint> points);

// The fit's size at n, rounded up to a whole byte; nullopt when it is
// negative there or does not fit 64 bits (a fit that does not extend to n).
std::optional<uint64_t> PredictSize(const SizeFit& fit, uint64_t n);

// The size of an allocation no form explains, guessed at n: the line through
// its two recorded sizes nearest n (by |value - n|, the larger value on a
// tie), rounded up to a byte. Between two recordings it interpolates; beyond
// them it extends the nearest segment: an offset plus a product (a fused
// buffer, a header and its rows) comes out exact from two points, which no
// form can confirm. nullopt with fewer than two distinct points, or when the
// line is negative or beyond 64 bits at n (the caller keeps the recorded size).
std::optional<uint64_t> GuessSize(std::span<const SizePoint> points, uint64_t n);

}  // namespace hbmsim::sim::scale

#endif  // HBMSIM_SIM_SCALE_SIZE_FIT_H_
