// stochastic-convert checked against a plain reference of XLA's rule (truncate the magnitude,
// round it up when the random bits are below the dropped fraction read as a fixed-point
// number, restore the sign) on random inputs of every operand type and result width; the
// special cases (NaN, infinities, saturation, the round-up past max of a negative value);
// the statistical property (the mean of many conversions of x approaches x); and refusals.
#include <cmath>
#include <limits>

#include "kernel_test_util.h"

namespace hlox::rt::testing {
namespace {

// The reference: computed with integer arithmetic on the fraction's bits where possible.
int64_t Reference(double x, uint64_t random, int bits, int64_t lo, int64_t hi) {
  if (std::isnan(x)) return 0;
  if (x >= static_cast<double>(hi)) return hi;
  if (x <= static_cast<double>(lo)) return lo;
  const double mag = std::fabs(x), whole = std::floor(mag);
  // fraction * 2^bits, exact for bits <= 64 because the fraction has at most 52 bits.
  const long double scaled = std::ldexp(static_cast<long double>(mag - whole), bits);
  int64_t r = static_cast<int64_t>(whole);
  if (static_cast<long double>(random) < std::floor(scaled)) ++r;
  return x < 0 ? -r : r;  // -(max + 1) == min for the negative round-up past max
}

std::unique_ptr<Instruction> ScInstr(PrimitiveType to, const std::vector<int64_t>& dims) {
  return Instruction::Create(Opcode::kStochasticConvert, Shape(to, dims), {});
}

PrimitiveType RandomType(PrimitiveType from) {
  return from == PrimitiveType::kF64 ? PrimitiveType::kU64
         : from == PrimitiveType::kF32 ? PrimitiveType::kU32 : PrimitiveType::kU16;
}

// A buffer of unsigned random bits of type t.
BufferPtr RandomBits(PrimitiveType t, int64_t n, std::mt19937_64& rng) {
  auto b = std::make_shared<Buffer>(Shape(t, {n}));
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = rng();
    if (t == PrimitiveType::kU16) b->as<uint16_t>()[i] = static_cast<uint16_t>(r);
    else if (t == PrimitiveType::kU32) b->as<uint32_t>()[i] = static_cast<uint32_t>(r);
    else b->as<uint64_t>()[i] = r;
  }
  return b;
}

uint64_t Bits(const Buffer& b, int64_t i) {
  switch (b.shape().element_type()) {
    case PrimitiveType::kU16: return b.as<uint16_t>()[i];
    case PrimitiveType::kU32: return b.as<uint32_t>()[i];
    default: return b.as<uint64_t>()[i];
  }
}

TEST(StochasticConvertKernel, MatchesReferenceOnRandomInputs) {
  std::mt19937_64 rng(11);
  const int64_t n = 4000;
  for (PrimitiveType from : {PrimitiveType::kF16, PrimitiveType::kBF16, PrimitiveType::kF32, PrimitiveType::kF64}) {
    for (PrimitiveType to : {PrimitiveType::kS8, PrimitiveType::kS16, PrimitiveType::kS32, PrimitiveType::kS64}) {
      const int to_bits = PrimitiveBitWidth(to);
      const int64_t hi = to_bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (to_bits - 1)) - 1;
      const int64_t lo = -hi - 1;
      // Values spread over the result's range and past it, with small ones for the fractions.
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      std::vector<double> v(n);
      for (int64_t i = 0; i < n; ++i) v[i] = u(rng) * (i % 3 == 0 ? 4.0 : i % 3 == 1 ? 300.0 : 1.5 * static_cast<double>(hi));
      BufferPtr x = MakeBuffer(Shape(from, {n}), v);
      BufferPtr r = RandomBits(RandomType(from), n, rng);
      Value y = RunKernel(&StochasticConvertKernel, *ScInstr(to, {n}), {x, r}, 2);
      const std::vector<double> xs = Doubles(*x);
      int mismatches = 0;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t want = Reference(xs[i], Bits(*r, i), PrimitiveBitWidth(RandomType(from)), lo, hi);
        const int64_t got = ReadIndex(*y.array, i);
        if (got != want && ++mismatches <= 3) {
          ADD_FAILURE() << PrimitiveTypeName(from) << "->" << PrimitiveTypeName(to) << " x=" << xs[i]
                        << " got " << got << " want " << want;
        }
      }
      EXPECT_EQ(mismatches, 0);
    }
  }
}

TEST(StochasticConvertKernel, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x = {std::nan(""), inf, -inf, 1e9, -1e9, 127.0, -128.0, -127.5, -127.5, 2.5, -2.5, 0.0};
  // u64 bits for f64: 0 rounds any nonzero fraction up, all-ones never does.
  const uint64_t up = 0, down = ~uint64_t{0};
  auto r = std::make_shared<Buffer>(Shape(PrimitiveType::kU64, {12}));
  const uint64_t bits[] = {up, up, up, up, up, up, up, up, down, up, down, up};
  for (int i = 0; i < 12; ++i) r->as<uint64_t>()[i] = bits[i];
  Value y = RunKernel(&StochasticConvertKernel, *ScInstr(PrimitiveType::kS8, {12}),
                      {MakeBuffer(Shape(PrimitiveType::kF64, {12}), x), r});
  const std::vector<double> want = {0, 127, -128, 127, -128, 127, -128, -128, -127, 3, -2, 0};
  EXPECT_EQ(Doubles(*y.array), want);
}

// The mean of many conversions of x with uniform random bits approaches x.
TEST(StochasticConvertKernel, MeanApproachesInput) {
  std::mt19937_64 rng(12);
  const int64_t n = 200000;
  for (double x : {0.3, -1.7, 5.125, -0.01}) {
    for (PrimitiveType from : {PrimitiveType::kF32, PrimitiveType::kBF16}) {
      BufferPtr xs = MakeBuffer(Shape(from, {n}), std::vector<double>(n, x));
      const double exact = Doubles(*xs)[0];  // x as the operand type holds it
      Value y = RunKernel(&StochasticConvertKernel, *ScInstr(PrimitiveType::kS32, {n}),
                          {xs, RandomBits(RandomType(from), n, rng)});
      double sum = 0;
      for (double v : Doubles(*y.array)) sum += v;
      // Each sample is Bernoulli around floor: the mean's standard error is below 0.5/sqrt(n).
      EXPECT_NEAR(sum / static_cast<double>(n), exact, 5 * 0.5 / std::sqrt(static_cast<double>(n)))
          << PrimitiveTypeName(from) << " x=" << x;
    }
  }
}

TEST(StochasticConvertKernel, RefusesWhatXlaDoesNotDefine) {
  std::mt19937_64 rng(13);
  BufferPtr x = MakeBuffer(Shape(PrimitiveType::kF32, {4}), {0.5, 1.5, -2.5, 3});
  BufferPtr r32 = RandomBits(PrimitiveType::kU32, 4, rng), r16 = RandomBits(PrimitiveType::kU16, 4, rng);
  EXPECT_EQ(TryKernel(&StochasticConvertKernel, *ScInstr(PrimitiveType::kBF16, {4}), {x, r32}).status().code(),
            absl::StatusCode::kUnimplemented);  // XLA converts to signed integers only
  EXPECT_FALSE(TryKernel(&StochasticConvertKernel, *ScInstr(PrimitiveType::kS32, {4}), {x, r16}).ok());
  EXPECT_FALSE(TryKernel(&StochasticConvertKernel, *ScInstr(PrimitiveType::kS32, {2, 2}), {x, r32}).ok());
  BufferPtr ints = MakeBuffer(Shape(PrimitiveType::kS32, {4}), {1, 2, 3, 4});
  EXPECT_FALSE(TryKernel(&StochasticConvertKernel, *ScInstr(PrimitiveType::kS32, {4}), {ints, r32}).ok());
}

}  // namespace
}  // namespace hlox::rt::testing
