// sort (fast key path, TOTALORDER floats, descending, multi-operand, stability, a comparator
// that needs the scalar interpreter: JAX's bitcast total-order pattern) and topk, against
// std::stable_sort references.
#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

#include "kernel_test_util.h"

namespace hlox::rt::testing {
namespace {

TEST(SortKernel, KeyValueStableAlongInnerDim) {
  std::mt19937_64 rng(2);
  Module m("m");
  const std::vector<int64_t> dims{3, 17, 4};
  for (PrimitiveType t : {PrimitiveType::kF32, PrimitiveType::kS32, PrimitiveType::kBF16, PrimitiveType::kU8}) {
    BufferPtr keys = RandomBuffer(Shape(t, dims), rng, 0, 6);  // many ties
    BufferPtr vals = RandomBuffer(Shape(PrimitiveType::kS32, dims), rng, -100, 100);
    auto instr = Instruction::Create(Opcode::kSort, Shape::Tuple({Shape(t, dims), Shape(PrimitiveType::kS32, dims)}), {});
    instr->attrs().dimensions = {1};
    instr->attrs().is_stable = true;
    instr->mutable_called_computations().push_back(
        CompareComputation(m, {t, PrimitiveType::kS32}, ComparisonDirection::kGt));
    Value got = RunKernel(&SortKernel, *instr, {keys, vals}, 2);
    ASSERT_TRUE(got.is_tuple);
    const std::vector<double> k = Doubles(*keys), v = Doubles(*vals);
    std::vector<double> wk(k.size()), wv(v.size());
    for (int64_t a = 0; a < 3; ++a) {
      for (int64_t c = 0; c < 4; ++c) {
        std::vector<int64_t> p(17);
        std::iota(p.begin(), p.end(), 0);
        auto at = [&](int64_t j) { return (a * 17 + j) * 4 + c; };
        std::stable_sort(p.begin(), p.end(), [&](int64_t x, int64_t y) { return k[at(x)] > k[at(y)]; });
        for (int64_t j = 0; j < 17; ++j) {
          wk[at(j)] = k[at(p[j])];
          wv[at(j)] = v[at(p[j])];
        }
      }
    }
    EXPECT_EQ(Doubles(*got.tuple[0].array), wk);
    EXPECT_EQ(Doubles(*got.tuple[1].array), wv);
  }
}

TEST(SortKernel, TotalOrderPutsNaNsAndSignedZerosInPlace) {
  Module m("m");
  auto instr = Instruction::Create(Opcode::kSort, Shape(PrimitiveType::kF32, {7}), {});
  instr->attrs().dimensions = {0};
  instr->mutable_called_computations().push_back(
      CompareComputation(m, {PrimitiveType::kF32}, ComparisonDirection::kLt, "TOTALORDER"));
  Value got = RunKernel(&SortKernel, *instr,
                        {MakeBuffer(Shape(PrimitiveType::kF32, {7}), {NAN, 1, -0.0, -INFINITY, -NAN, 0.0, -2})});
  const float* r = got.array->as<float>();
  EXPECT_TRUE(std::isnan(r[0]) && std::signbit(r[0]));
  EXPECT_EQ(r[1], -INFINITY);
  EXPECT_EQ(r[2], -2);
  EXPECT_TRUE(r[3] == 0 && std::signbit(r[3]));
  EXPECT_TRUE(r[4] == 0 && !std::signbit(r[4]));
  EXPECT_EQ(r[5], 1);
  EXPECT_TRUE(std::isnan(r[6]) && !std::signbit(r[6]));
}

// JAX's older total-order comparator: key(x) = x < 0 ? (INT64_MAX - bits) : bits, compare LT.
Computation* BitcastComparator(Module& m) {
  Computation* c = m.AddComputation(std::make_unique<Computation>("cmp_bits"));
  auto key = [&](int64_t pn) {
    Instruction* p = c->AddInstruction(Instruction::CreateParameter(pn, Shape(PrimitiveType::kF64, {})));
    Instruction* s = c->AddInstruction(Instruction::Create(Opcode::kBitcastConvert, Shape(PrimitiveType::kS64, {}), {p}));
    Literal zero(Shape(PrimitiveType::kS64, {}));
    Instruction* z = c->AddInstruction(Instruction::CreateConstant(std::move(zero)));
    Instruction* neg = c->AddInstruction(Instruction::Create(Opcode::kCompare, Shape(PrimitiveType::kPred, {}), {s, z}));
    neg->attrs().comparison = ComparisonDirection::kLt;
    Literal mx(Shape(PrimitiveType::kU64, {}));
    mx.SetFromUint64(0, 9223372036854775807ull);
    Instruction* k = c->AddInstruction(Instruction::CreateConstant(std::move(mx)));
    Instruction* u = c->AddInstruction(Instruction::Create(Opcode::kBitcastConvert, Shape(PrimitiveType::kU64, {}), {p}));
    Instruction* sub = c->AddInstruction(Instruction::Create(Opcode::kSubtract, Shape(PrimitiveType::kU64, {}), {k, u}));
    Instruction* sb = c->AddInstruction(Instruction::Create(Opcode::kBitcastConvert, Shape(PrimitiveType::kS64, {}), {sub}));
    return c->AddInstruction(Instruction::Create(Opcode::kSelect, Shape(PrimitiveType::kS64, {}), {neg, sb, s}));
  };
  Instruction* a = key(0);
  Instruction* b = key(1);
  Instruction* root = c->AddInstruction(Instruction::Create(Opcode::kCompare, Shape(PrimitiveType::kPred, {}), {a, b}));
  root->attrs().comparison = ComparisonDirection::kLt;
  c->set_root(root);
  return c;
}

TEST(SortKernel, InterpretedComparatorMatchesStdSort) {
  std::mt19937_64 rng(4);
  Module m("m");
  auto instr = Instruction::Create(Opcode::kSort, Shape(PrimitiveType::kF64, {4, 300}), {});
  instr->attrs().dimensions = {1};
  instr->mutable_called_computations().push_back(BitcastComparator(m));
  BufferPtr in = RandomBuffer(Shape(PrimitiveType::kF64, {4, 300}), rng);
  Value got = RunKernel(&SortKernel, *instr, {in});
  std::vector<double> want = Doubles(*in);
  for (int r = 0; r < 4; ++r) std::sort(want.begin() + r * 300, want.begin() + (r + 1) * 300);
  EXPECT_EQ(Doubles(*got.array), want);
}

TEST(SortKernel, TopKLargestWithIndices) {
  auto instr = Instruction::Create(Opcode::kTopK, Shape::Tuple({Shape(PrimitiveType::kF32, {2, 2}), Shape(PrimitiveType::kS32, {2, 2})}), {});
  instr->attrs().k = 2;
  instr->attrs().largest = true;
  Value got = RunKernel(&SortKernel, *instr, {MakeBuffer(Shape(PrimitiveType::kF32, {2, 4}), {1, 5, 3, 5, -1, -2, 0, -3})});
  EXPECT_EQ(Doubles(*got.tuple[0].array), (std::vector<double>{5, 5, 0, -1}));
  EXPECT_EQ(Doubles(*got.tuple[1].array), (std::vector<double>{1, 3, 2, 0}));
}

TEST(SortKernel, ZeroSizedAndBadDimension) {
  Module m("m");
  auto instr = Instruction::Create(Opcode::kSort, Shape(PrimitiveType::kF32, {0, 3}), {});
  instr->attrs().dimensions = {1};
  instr->mutable_called_computations().push_back(CompareComputation(m, {PrimitiveType::kF32}, ComparisonDirection::kLt));
  Value got = RunKernel(&SortKernel, *instr, {MakeBuffer(Shape(PrimitiveType::kF32, {0, 3}), {})});
  EXPECT_EQ(got.array->element_count(), 0);
  instr->attrs().dimensions = {5};
  EXPECT_FALSE(TryKernel(&SortKernel, *instr, {MakeBuffer(Shape(PrimitiveType::kF32, {0, 3}), {})}).ok());
}

}  // namespace
}  // namespace hlox::rt::testing
