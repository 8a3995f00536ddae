// Output comparison: exact integers, float tolerances per type, NaN/Inf positions, leaf and
// index reporting, and the reference cache's LRU behaviour.
#include <cmath>

#include "cost/reference_cache.h"
#include "cost/validate.h"
#include "gtest/gtest.h"

namespace hlox {
namespace {

Literal Floats(PrimitiveType t, std::vector<double> v) {
  Literal l(Shape(t, {static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) l.SetFromDouble(static_cast<int64_t>(i), v[i]);
  return l;
}

Literal Ints(PrimitiveType t, std::vector<int64_t> v) {
  Literal l(Shape(t, {static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) l.SetFromInt64(static_cast<int64_t>(i), v[i]);
  return l;
}

TEST(ValidateTest, IntegersAreExact) {
  Literal a = Ints(PrimitiveType::kS32, {1, 2, 3});
  EXPECT_FALSE(CompareLeaf(a, Ints(PrimitiveType::kS32, {1, 2, 3}), 0));
  auto m = CompareLeaf(a, Ints(PrimitiveType::kS32, {1, 2, 4}), 0);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->index, 2);
  EXPECT_EQ(m->expected, 3);
  EXPECT_EQ(m->actual, 4);
  EXPECT_TRUE(CompareLeaf(Ints(PrimitiveType::kPred, {1, 0}), Ints(PrimitiveType::kPred, {1, 1}), 0));
}

TEST(ValidateTest, F32Tolerance) {
  Literal e = Floats(PrimitiveType::kF32, {10.0, 0.0, -2.0});
  // 10 * (1 + 5e-5) is inside rtol 1e-4; 5e-6 is inside atol 1e-5; the leaf floor is
  // 1e-4 / 10 * 10 = 1e-4, so -2.001 (1e-3 off) is outside 1e-5 + 2e-4 + 1e-4.
  EXPECT_FALSE(CompareLeaf(e, Floats(PrimitiveType::kF32, {10.0005, 5e-6, -2.0001}), 0));
  auto m = CompareLeaf(e, Floats(PrimitiveType::kF32, {10.0, 0.0, -2.001}), 0);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->index, 2);
  EXPECT_NEAR(m->actual, -2.001, 1e-6);
}

// Summation-order noise: an entry that nearly cancels may miss rtol of itself, but not rtol/10
// of the leaf's largest magnitude (here 0.1 * 1e-4 * 1000 = 0.01).
TEST(ValidateTest, LeafFloorAdmitsSummationNoiseOnly) {
  Literal e = Floats(PrimitiveType::kF32, {1000.0, 0.001, -500.0});
  EXPECT_FALSE(CompareLeaf(e, Floats(PrimitiveType::kF32, {1000.0, 0.006, -500.0}), 0));
  auto m = CompareLeaf(e, Floats(PrimitiveType::kF32, {1000.0, 0.05, -500.0}), 0);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->index, 1);
  // The floor comes from the expected leaf, not from a wild actual value.
  EXPECT_TRUE(CompareLeaf(Floats(PrimitiveType::kF32, {1.0, 0.001}), Floats(PrimitiveType::kF32, {1e6, 0.001}), 0));
}

TEST(ValidateTest, Bf16IsLooserThanF32) {
  // A 1% difference: fine for bf16, wrong for f32.
  EXPECT_FALSE(CompareLeaf(Floats(PrimitiveType::kBF16, {1.0}), Floats(PrimitiveType::kBF16, {1.0078125}), 0));
  EXPECT_TRUE(CompareLeaf(Floats(PrimitiveType::kF32, {1.0}), Floats(PrimitiveType::kF32, {1.01}), 0));
  EXPECT_LT(ToleranceFor(PrimitiveType::kF64).rtol, ToleranceFor(PrimitiveType::kF32).rtol);
  EXPECT_LT(ToleranceFor(PrimitiveType::kF32).rtol, ToleranceFor(PrimitiveType::kF16).rtol);
}

TEST(ValidateTest, NanAndInfPositionsMustMatch) {
  double nan = std::nan("");
  Literal e = Floats(PrimitiveType::kF32, {1, nan, INFINITY});
  EXPECT_FALSE(CompareLeaf(e, Floats(PrimitiveType::kF32, {1, nan, INFINITY}), 0));
  auto m = CompareLeaf(e, Floats(PrimitiveType::kF32, {nan, nan, INFINITY}), 3);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->output, 3);
  EXPECT_EQ(m->index, 0);
  EXPECT_TRUE(std::isnan(m->actual));
  m = CompareLeaf(e, Floats(PrimitiveType::kF32, {1, 5, INFINITY}), 0);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->index, 1);
  m = CompareLeaf(e, Floats(PrimitiveType::kF32, {1, nan, -INFINITY}), 0);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->index, 2);
  m = CompareLeaf(e, Floats(PrimitiveType::kF32, {1, nan, 3.4e38}), 0);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->index, 2);
}

TEST(ValidateTest, ShapeAndLeafMismatch) {
  Literal a = Floats(PrimitiveType::kF32, {1, 2});
  Literal b = Floats(PrimitiveType::kF32, {1, 2, 3});
  auto m = CompareLeaf(a, b, 0);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->index, -1);
  EXPECT_TRUE(CompareLeaf(a, Floats(PrimitiveType::kF64, {1, 2}), 0));
  EXPECT_TRUE(CompareOutputs({&a}, {&a, &b}));
}

TEST(ValidateTest, TupleLeavesAreFlattenedInOrder) {
  Shape ts = Shape::Tuple({Shape(PrimitiveType::kF32, {2}),
                           Shape::Tuple({Shape(PrimitiveType::kS32, {1}), Shape(PrimitiveType::kF32, {3})})});
  Literal e(ts), a(ts);
  a.tuple_elements()[1].tuple_elements()[1].SetFromDouble(2, 1.0);
  auto el = LiteralLeaves(e), al = LiteralLeaves(a);
  ASSERT_EQ(el.size(), 3u);
  auto m = CompareOutputs(el, al);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->output, 2);
  EXPECT_EQ(m->index, 2);
  EXPECT_EQ(m->expected, 0);
  EXPECT_EQ(m->actual, 1);
}

TEST(ReferenceCacheTest, ComputesOncePerKeyAndEvictsLeastRecent) {
  ReferenceCache cache(2);
  int computed = 0;
  auto make = [&]() -> absl::StatusOr<Literal> {
    ++computed;
    return Floats(PrimitiveType::kF32, {1, 2});
  };
  ASSERT_TRUE(cache.GetOrCompute("h1", 0, make).ok());
  ASSERT_TRUE(cache.GetOrCompute("h1", 0, make).ok());
  EXPECT_EQ(computed, 1);
  ASSERT_TRUE(cache.GetOrCompute("h1", 1, make).ok());  // another seed is another entry
  EXPECT_EQ(computed, 2);
  ASSERT_TRUE(cache.Find("h1", 0));                      // h1/0 now most recent
  ASSERT_TRUE(cache.GetOrCompute("h2", 0, make).ok());  // evicts h1/1
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_FALSE(cache.Find("h1", 1));
  EXPECT_TRUE(cache.Find("h1", 0));
  EXPECT_EQ(cache.bytes(), 16);
  auto err = cache.GetOrCompute("h3", 0, []() -> absl::StatusOr<Literal> {
    return absl::InternalError("boom");
  });
  EXPECT_FALSE(err.ok());
  EXPECT_FALSE(cache.Find("h3", 0));
}

}  // namespace
}  // namespace hlox
