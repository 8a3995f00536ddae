// reduce-window (fast add/max paths, variadic and generic reducers via the scalar-program /
// executor-free paths are covered through the fast path here) and select-and-scatter against
// references that materialize the padded, base-dilated input explicitly.
#include <cmath>
#include <limits>

#include "kernel_test_util.h"

namespace hlox::rt::testing {
namespace {

// Reference: output[o] = fold(init, real elements of the window), windows walked row-major.
std::vector<double> RefReduceWindow(const std::vector<int64_t>& dims, const std::vector<double>& in,
                                    const Window& w, const std::vector<int64_t>& out_dims, double init,
                                    bool is_max) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> strides = RowMajorStrides(dims);
  std::vector<double> out;
  std::vector<int64_t> o(rank, 0);
  int64_t total = 1;
  for (int64_t d : out_dims) total *= d;
  for (int64_t n = 0; n < total; ++n) {
    double acc = init;
    std::vector<int64_t> k(rank, 0), sizes;
    for (const auto& wd : w.dims) sizes.push_back(wd.size);
    bool any = true;
    for (int64_t s : sizes) any = any && s > 0;
    while (any) {
      bool ok = true;
      int64_t off = 0;
      for (int64_t d = 0; d < rank; ++d) {
        const auto& wd = w.dims[d];
        const int64_t q = o[d] * wd.stride + k[d] * wd.window_dilation - wd.pad_low;
        if (q < 0 || q % wd.base_dilation || q / wd.base_dilation >= dims[d]) ok = false;
        else off += q / wd.base_dilation * strides[d];
      }
      if (ok) acc = is_max ? std::max(acc, in[off]) : acc + in[off];
      if (!NextIndex(k, sizes)) break;
    }
    out.push_back(acc);
    NextIndex(o, out_dims);
  }
  return out;
}

TEST(ReduceWindowKernel, AddAndMaxWithPaddingAndDilation) {
  std::mt19937_64 rng(1);
  Module m("m");
  // Ranks 1-4: the kernel walks output rows (the last dim) once per window position of the
  // leading dims, so windows over several leading dims and 1-wide rows are both covered.
  for (int iter = 0; iter < 80; ++iter) {
    const bool is_max = iter % 2;
    const PrimitiveType t = iter % 3 == 0 ? PrimitiveType::kS32 : (iter % 3 == 1 ? PrimitiveType::kF32 : PrimitiveType::kF64);
    const int64_t rank = 1 + iter % 4;
    std::vector<int64_t> dims, out_dims;
    Window w;
    for (int64_t d = 0; d < rank; ++d) {
      WindowDimension wd;
      dims.push_back(1 + rng() % 5);
      wd.size = 1 + rng() % 3;
      wd.stride = 1 + rng() % 2;
      wd.base_dilation = 1 + rng() % 2;
      wd.window_dilation = 1 + rng() % 2;
      wd.pad_low = static_cast<int64_t>(rng() % 3);
      wd.pad_high = static_cast<int64_t>(rng() % 3);
      const int64_t padded = (dims[d] - 1) * wd.base_dilation + 1 + wd.pad_low + wd.pad_high;
      const int64_t dk = (wd.size - 1) * wd.window_dilation + 1;
      out_dims.push_back(padded >= dk ? (padded - dk) / wd.stride + 1 : 0);
      w.dims.push_back(wd);
    }
    BufferPtr in = RandomBuffer(Shape(t, dims), rng);
    const double init = is_max ? -1000 : 0.5 * (t != PrimitiveType::kS32);
    BufferPtr init_b = MakeBuffer(Shape(t, {}), {init});
    auto instr = Instruction::Create(Opcode::kReduceWindow, Shape(t, out_dims), {});
    instr->attrs().window = w;
    instr->mutable_called_computations().push_back(BinaryComputation(m, is_max ? Opcode::kMaximum : Opcode::kAdd, t));
    Value got = RunKernel(&ReduceWindowKernel, *instr, {in, init_b}, 1 + iter % 2);
    EXPECT_ALL_CLOSE(Doubles(*got.array), RefReduceWindow(dims, Doubles(*in), w, out_dims, init, is_max), 1e-5, 1e-5);
  }
}

TEST(ReduceWindowKernel, Bf16SumAndNaNMax) {
  Module m("m");
  Window w;
  w.dims = {WindowDimension{2, 2, 0, 0, 1, 1, false}};
  auto instr = Instruction::Create(Opcode::kReduceWindow, Shape(PrimitiveType::kBF16, {2}), {});
  instr->attrs().window = w;
  instr->mutable_called_computations().push_back(BinaryComputation(m, Opcode::kAdd, PrimitiveType::kBF16));
  Value got = RunKernel(&ReduceWindowKernel, *instr,
                        {MakeBuffer(Shape(PrimitiveType::kBF16, {4}), {1, 2, 3, 4.5}), MakeBuffer(Shape(PrimitiveType::kBF16, {}), {0})});
  EXPECT_EQ(Doubles(*got.array), (std::vector<double>{3, 7.5}));
  auto mx = Instruction::Create(Opcode::kReduceWindow, Shape(PrimitiveType::kF32, {2}), {});
  mx->attrs().window = w;
  mx->mutable_called_computations().push_back(BinaryComputation(m, Opcode::kMaximum, PrimitiveType::kF32));
  Value g2 = RunKernel(&ReduceWindowKernel, *mx,
                       {MakeBuffer(Shape(PrimitiveType::kF32, {4}), {1, NAN, 3, 4}), MakeBuffer(Shape(PrimitiveType::kF32, {}), {-INFINITY})});
  EXPECT_TRUE(std::isnan(Doubles(*g2.array)[0]));
  EXPECT_EQ(Doubles(*g2.array)[1], 4);
}

TEST(SelectAndScatterKernel, MaxPoolGradient) {
  Module m("m");
  // operand 1x6, window 2 stride 2 with pad_high 1 -> 4 windows... use 3 windows over 6.
  Window w;
  w.dims = {WindowDimension{2, 2, 0, 0, 1, 1, false}};
  auto sel = CompareComputation(m, {PrimitiveType::kF32}, ComparisonDirection::kGe);
  auto instr = Instruction::Create(Opcode::kSelectAndScatter, Shape(PrimitiveType::kF32, {6}), {});
  instr->attrs().window = w;
  instr->mutable_called_computations() = {sel, BinaryComputation(m, Opcode::kAdd, PrimitiveType::kF32)};
  Value got = RunKernel(&SelectAndScatterKernel, *instr,
                        {MakeBuffer(Shape(PrimitiveType::kF32, {6}), {1, 5, 7, 7, 2, 0}),
                         MakeBuffer(Shape(PrimitiveType::kF32, {3}), {10, 20, 30}),
                         MakeBuffer(Shape(PrimitiveType::kF32, {}), {0.5})});
  // Ties keep the first (GE keeps current).
  EXPECT_EQ(Doubles(*got.array), (std::vector<double>{0.5, 10.5, 20.5, 0.5, 30.5, 0.5}));
  // Overlapping windows (size 3 stride 1) accumulate into the same max.
  Window w2;
  w2.dims = {WindowDimension{3, 1, 0, 0, 1, 1, false}};
  auto i2 = Instruction::Create(Opcode::kSelectAndScatter, Shape(PrimitiveType::kF32, {4}), {});
  i2->attrs().window = w2;
  i2->mutable_called_computations() = instr->called_computations();
  Value g2 = RunKernel(&SelectAndScatterKernel, *i2,
                       {MakeBuffer(Shape(PrimitiveType::kF32, {4}), {1, 9, 2, 3}),
                        MakeBuffer(Shape(PrimitiveType::kF32, {2}), {1, 2}),
                        MakeBuffer(Shape(PrimitiveType::kF32, {}), {0})});
  EXPECT_EQ(Doubles(*g2.array), (std::vector<double>{0, 3, 0, 0}));
}

}  // namespace
}  // namespace hlox::rt::testing

namespace hlox::rt::testing {
namespace {

// Variadic argmax reducer: ((v0, i0), (v1, i1)) -> the larger value, ties to the lower index.
Computation* ArgmaxReducer(Module& m) {
  Computation* c = m.AddComputation(std::make_unique<Computation>("argmax"));
  const Shape f(PrimitiveType::kF32, {}), s(PrimitiveType::kS32, {}), p(PrimitiveType::kPred, {});
  Instruction* v0 = c->AddInstruction(Instruction::CreateParameter(0, f));
  Instruction* i0 = c->AddInstruction(Instruction::CreateParameter(1, s));
  Instruction* v1 = c->AddInstruction(Instruction::CreateParameter(2, f));
  Instruction* i1 = c->AddInstruction(Instruction::CreateParameter(3, s));
  Instruction* gt = c->AddInstruction(Instruction::Create(Opcode::kCompare, p, {v0, v1}));
  gt->attrs().comparison = ComparisonDirection::kGt;
  Instruction* eq = c->AddInstruction(Instruction::Create(Opcode::kCompare, p, {v0, v1}));
  eq->attrs().comparison = ComparisonDirection::kEq;
  Instruction* lt = c->AddInstruction(Instruction::Create(Opcode::kCompare, p, {i0, i1}));
  lt->attrs().comparison = ComparisonDirection::kLt;
  Instruction* tie = c->AddInstruction(Instruction::Create(Opcode::kAnd, p, {eq, lt}));
  Instruction* keep = c->AddInstruction(Instruction::Create(Opcode::kOr, p, {gt, tie}));
  Instruction* v = c->AddInstruction(Instruction::Create(Opcode::kSelect, f, {keep, v0, v1}));
  Instruction* i = c->AddInstruction(Instruction::Create(Opcode::kSelect, s, {keep, i0, i1}));
  c->set_root(c->AddInstruction(Instruction::Create(Opcode::kTuple, Shape::Tuple({f, s}), {v, i})));
  return c;
}

TEST(ReduceWindowKernel, VariadicArgmaxAndSubtractReducer) {
  Module m("m");
  Window w;
  w.dims = {WindowDimension{3, 2, 1, 0, 1, 1, false}};  // size 3 stride 2 pad_low 1
  auto instr = Instruction::Create(Opcode::kReduceWindow,
                                   Shape::Tuple({Shape(PrimitiveType::kF32, {3}), Shape(PrimitiveType::kS32, {3})}), {});
  instr->attrs().window = w;
  instr->mutable_called_computations().push_back(ArgmaxReducer(m));
  Value got = RunKernel(&ReduceWindowKernel, *instr,
                        {MakeBuffer(Shape(PrimitiveType::kF32, {6}), {4, 1, 4, 9, 2, 2}),
                         MakeBuffer(Shape(PrimitiveType::kS32, {6}), {0, 1, 2, 3, 4, 5}),
                         MakeBuffer(Shape(PrimitiveType::kF32, {}), {-INFINITY}),
                         MakeBuffer(Shape(PrimitiveType::kS32, {}), {-1})}, 2);
  ASSERT_TRUE(got.is_tuple);
  // Windows: [pad,4,1] [1,4,9]... positions -1..1, 1..3, 3..5.
  EXPECT_EQ(Doubles(*got.tuple[0].array), (std::vector<double>{4, 9, 9}));
  EXPECT_EQ(Doubles(*got.tuple[1].array), (std::vector<double>{0, 3, 3}));
  // A non-fast reducer (subtract) folds in window order: ((init - a) - b) - c.
  auto sub = Instruction::Create(Opcode::kReduceWindow, Shape(PrimitiveType::kS32, {2}), {});
  Window w2;
  w2.dims = {WindowDimension{2, 2, 0, 0, 1, 1, false}};
  sub->attrs().window = w2;
  sub->mutable_called_computations().push_back(BinaryComputation(m, Opcode::kSubtract, PrimitiveType::kS32));
  Value s = RunKernel(&ReduceWindowKernel, *sub, {MakeBuffer(Shape(PrimitiveType::kS32, {4}), {1, 2, 3, 4}),
                                                  MakeBuffer(Shape(PrimitiveType::kS32, {}), {10})});
  EXPECT_EQ(Doubles(*s.array), (std::vector<double>{7, 3}));
}

TEST(ScatterKernel, InterpretedUpdateComputation) {
  Module m("m");
  ScatterDimensionNumbers dn;
  dn.inserted_window_dims = {0};
  dn.scatter_dims_to_operand_dims = {0};
  dn.index_vector_dim = 1;
  auto instr = Instruction::Create(Opcode::kScatter, Shape(PrimitiveType::kF32, {3}), {});
  instr->attrs().scatter = dn;
  instr->mutable_called_computations().push_back(BinaryComputation(m, Opcode::kSubtract, PrimitiveType::kF32));
  Value got = RunKernel(&ScatterKernel, *instr, {MakeBuffer(Shape(PrimitiveType::kF32, {3}), {10, 10, 10}),
                                                 MakeBuffer(Shape(PrimitiveType::kS32, {3, 1}), {2, 2, 0}),
                                                 MakeBuffer(Shape(PrimitiveType::kF32, {3}), {1, 2, 4})});
  EXPECT_EQ(Doubles(*got.array), (std::vector<double>{6, 10, 7}));
}

}  // namespace
}  // namespace hlox::rt::testing
