// Kernel-family test helpers (see kernel_test_util.h).
#include "kernel_test_util.h"

#include <cmath>

#include "runtime/core/thread_pool.h"

namespace hlox::rt::testing {

BufferPtr MakeBuffer(const Shape& shape, const std::vector<double>& v) {
  auto b = std::make_shared<Buffer>(shape);
  EXPECT_EQ(static_cast<int64_t>(v.size()), b->element_count());
  for (int64_t i = 0; i < b->element_count(); ++i) StoreDouble(*b, i, v[i]);
  return b;
}

BufferPtr RandomBuffer(const Shape& shape, std::mt19937_64& rng, int64_t lo, int64_t hi) {
  std::vector<double> v(shape.ElementCount());
  const PrimitiveType t = shape.element_type();
  std::uniform_real_distribution<double> fd(-2.0, 2.0);
  std::uniform_int_distribution<int64_t> id(IsUnsignedInt(t) ? 0 : lo, hi);
  for (double& x : v) {
    if (t == PrimitiveType::kPred) x = static_cast<double>(rng() & 1);
    else x = IsFloatingPoint(t) ? fd(rng) : static_cast<double>(id(rng));
  }
  return MakeBuffer(shape, v);
}

std::vector<double> Doubles(const Buffer& b) { return ToDoubles(b); }

absl::StatusOr<Value> TryKernel(KernelFn kernel, const Instruction& instr,
                                const std::vector<BufferPtr>& args, int threads) {
  ThreadPool pool(threads);
  KernelContext ctx;
  ctx.pool = &pool;
  ctx.seed = 42;
  std::vector<Value> vals;
  for (const BufferPtr& b : args) vals.push_back(Value::Array(b));
  std::vector<const Value*> ptrs;
  for (const Value& v : vals) ptrs.push_back(&v);
  return kernel(instr, ptrs, ctx);
}

Value RunKernel(KernelFn kernel, const Instruction& instr, const std::vector<BufferPtr>& args, int threads) {
  auto r = TryKernel(kernel, instr, args, threads);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : Value();
}

Computation* BinaryComputation(Module& module, Opcode op, PrimitiveType t) {
  auto comp = std::make_unique<Computation>(module.UniqueName("binary"));
  Computation* c = module.AddComputation(std::move(comp));
  Instruction* p0 = c->AddInstruction(Instruction::CreateParameter(0, Shape(t, {})));
  Instruction* p1 = c->AddInstruction(Instruction::CreateParameter(1, Shape(t, {})));
  Instruction* root = c->AddInstruction(Instruction::Create(op, Shape(t, {}), {p0, p1}));
  c->set_root(root);
  return c;
}

Computation* CompareComputation(Module& module, const std::vector<PrimitiveType>& types,
                                ComparisonDirection dir, const std::string& type) {
  auto comp = std::make_unique<Computation>(module.UniqueName("compare"));
  Computation* c = module.AddComputation(std::move(comp));
  std::vector<Instruction*> params;
  for (size_t i = 0; i < 2 * types.size(); ++i) {
    params.push_back(c->AddInstruction(Instruction::CreateParameter(static_cast<int64_t>(i), Shape(types[i / 2], {}))));
  }
  Instruction* root = c->AddInstruction(
      Instruction::Create(Opcode::kCompare, Shape(PrimitiveType::kPred, {}), {params[0], params[1]}));
  root->attrs().comparison = dir;
  root->attrs().comparison_type = type;
  c->set_root(root);
  return c;
}

double CloseRatio(const std::vector<double>& a, const std::vector<double>& b, double atol, double rtol) {
  double worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    const double r = std::fabs(a[i] - b[i]) / (atol + rtol * std::fabs(b[i]));
    if (!(r <= worst)) worst = std::isnan(r) ? 1e30 : r;
  }
  return worst;
}

}  // namespace hlox::rt::testing
