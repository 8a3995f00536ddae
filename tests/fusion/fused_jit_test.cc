// The fused loop's generated machine code (runtime/fused/jit.*): programs on the register
// path's plain path run as one generated loop for whole sub-blocks; its results must be the
// exact bits of the micro-block interpreter (FusedRunOptions::jit = false) and of the block
// loop, for every op it emits, special values (NaN, infinities, signed zeros, denormals,
// saturating magnitudes), outputs that are parameters, scalars or intermediates, sizes with
// partial sub-blocks, 1 and 2 threads, the streaming path, and random programs, including ones
// with more live values than the registers hold at full unroll. Programs outside it (log, too
// many streams) keep running on the interpreter.
#include <cmath>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "common/cpu_isa.h"
#include "tests/fusion/fused_test_util.h"

namespace hlox::rt {
namespace {

using testing::Compile;
using testing::F32;
using testing::Scalar;

// Whether the active instruction-set level generates machine code for the plain path (what
// the level must provide, whatever CPU the test runs on: HLOX_ISA selects lower levels): zmm
// code on AVX-512, ymm code on AVX2, none on the generic level.
bool LevelGeneratesCode() { return ActiveIsa() != IsaLevel::kGeneric; }

// Whether two results have the same bits, any NaN matching any NaN; names the first differing
// element otherwise. (When both operands of an add or multiply are NaN, x86 returns the first
// one's payload and sign; the compiler may swap a commutative op's operands in the interpreter,
// so which NaN comes out is not specified across paths, only that one does.)
::testing::AssertionResult SameBits(const Value& a, const Value& b) {
  std::vector<const Buffer*> x, y;
  if (a.is_tuple) {
    for (const Value& v : a.tuple) x.push_back(v.array.get());
    for (const Value& v : b.tuple) y.push_back(v.array.get());
  } else {
    x.push_back(a.array.get());
    y.push_back(b.array.get());
  }
  if (x.size() != y.size()) return ::testing::AssertionFailure() << "output counts differ";
  for (size_t k = 0; k < x.size(); ++k) {
    const int64_t n = x[k]->element_count();
    if (y[k]->element_count() != n) return ::testing::AssertionFailure() << "output " << k << " sizes differ";
    const uint32_t* p = reinterpret_cast<const uint32_t*>(x[k]->data());
    const uint32_t* q = reinterpret_cast<const uint32_t*>(y[k]->data());
    auto nan = [](uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; };
    for (int64_t i = 0; i < n; ++i) {
      if (p[i] != q[i] && !(nan(p[i]) && nan(q[i]))) {
        return ::testing::AssertionFailure() << "output " << k << " element " << i << ": " << std::hex << p[i]
                                             << " vs " << q[i];
      }
    }
  }
  return ::testing::AssertionSuccess();
}

// Runs `args` through generated code (1 and 2 threads), the interpreter and (`block_loop`)
// the block loop; expects one set of bits.
void ExpectSameEverywhere(const FusedProgram& prog, const std::vector<const Value*>& args, const std::string& what,
                          bool block_loop = true) {
  FusedRunOptions jit, interp, block;
  interp.jit = false;
  block.vector_path = false;
  auto a = prog.Run(args, nullptr, jit);
  auto b = prog.Run(args, nullptr, interp);
  auto c = prog.Run(args, nullptr, block);
  ThreadPool pool(2);
  auto d = prog.Run(args, &pool, jit);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok()) << what;
  EXPECT_TRUE(SameBits(*a, *b)) << what << ": generated code vs interpreter";
  if (block_loop) {
    EXPECT_TRUE(SameBits(*a, *c)) << what << ": generated code vs block loop";
  }
  EXPECT_TRUE(SameBits(*a, *d)) << what << ": 1 vs 2 threads";
}

// Every op the generated code emits, a scalar, a bf16 rounding, and outputs that are an
// intermediate, a parameter and a broadcast scalar.
std::string EveryOpText(int64_t n) {
  constexpr char kText[] = R"(HloModule m
fused {
  x = f32$S parameter(0)
  y = f32$S parameter(1)
  s = f32[] parameter(2)
  c = f32[] constant(0.75)
  ss = f32[] multiply(s, c)
  bs = f32$S broadcast(ss), dimensions={}
  m = f32$S multiply(x, bs)
  t = f32$S tanh(m)
  e = f32$S exponential(y)
  l = f32$S logistic(x)
  ab = f32$S abs(y)
  sq = f32$S sqrt(ab)
  rs = f32$S rsqrt(ab)
  ng = f32$S negate(t)
  fl = f32$S floor(e)
  ce = f32$S ceil(m)
  rn = f32$S round-nearest-even(y)
  hb = bf16$S convert(m)
  hf = f32$S convert(hb)
  a1 = f32$S add(t, e)
  a2 = f32$S subtract(a1, l)
  a3 = f32$S multiply(a2, hf)
  a4 = f32$S divide(a3, sq)
  a5 = f32$S maximum(a4, rs)
  a6 = f32$S minimum(a5, ng)
  a7 = f32$S add(a6, fl)
  a8 = f32$S subtract(a7, ce)
  r = f32$S add(a8, rn)
  ROOT o = (f32$S, f32$S, f32$S, f32$S) tuple(r, m, x, bs)
}
ENTRY main {
  a = f32$S parameter(0)
  b = f32$S parameter(1)
  c = f32[] parameter(2)
  ROOT f = (f32$S, f32$S, f32$S, f32$S) fusion(a, b, c), kind=kLoop, calls=fused
}
)";
  return absl::StrReplaceAll(kText, {{"$S", absl::StrCat("[", n, "]")}});
}

// Inputs in [-2, 2) with special values spread over the array (every 7th element of x and
// every 5th of y, cycling through the list), so every register lane meets them.
void AddSpecials(Value* x, Value* y) {
  const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 90.0f, -90.0f, 1e-40f, -1e-40f,
                            1e-4f, -3e-4f, 7.99f, -8.5f, 89.5f, -104.5f, 200.0f, 1e30f, -1e30f};
  constexpr int kCount = sizeof(specials) / sizeof(specials[0]);
  float* px = x->array->as<float>();
  float* py = y->array->as<float>();
  for (int64_t i = 0, k = 0; i < x->array->element_count(); i += 7, ++k) px[i] = specials[k % kCount];
  for (int64_t i = 0, k = 3; i < y->array->element_count(); i += 5, ++k) py[i] = specials[k % kCount];
}

TEST(FusedJit, EveryOpMatchesInterpreterAndBlockLoop) {
  for (int64_t n : {1, 255, 256, 257, 512, 4099, 70000}) {
    std::unique_ptr<Module> keep;
    auto prog = Compile(EveryOpText(n), &keep);
    ASSERT_NE(prog, nullptr);
    EXPECT_EQ(prog->has_jit_path(), LevelGeneratesCode()) << "n=" << n;
    Value x = F32({n}, 1), y = F32({n}, 2), s = Scalar(1.5f);
    AddSpecials(&x, &y);
    ExpectSameEverywhere(*prog, {&x, &y, &s}, absl::StrCat("n=", n));
  }
}

// The 6-op chain on the streaming path (inputs and output over the stream-store threshold:
// prefetching and non-temporal stores).
TEST(FusedJit, ChainOnTheStreamingPathMatchesInterpreter) {
  constexpr int64_t n = (int64_t{1} << 21) + 300;
  const std::string text = absl::StrReplaceAll(R"(HloModule m
fused {
  x = f32$S parameter(0)
  y = f32$S parameter(1)
  z = f32$S parameter(2)
  two = f32[] constant(2)
  one = f32[] constant(1)
  b2 = f32$S broadcast(two), dimensions={}
  b1 = f32$S broadcast(one), dimensions={}
  m = f32$S multiply(b2, x)
  a = f32$S add(m, b1)
  t = f32$S tanh(a)
  u = f32$S multiply(t, y)
  e = f32$S exponential(u)
  ROOT r = f32$S subtract(e, z)
}
ENTRY main {
  x = f32$S parameter(0)
  y = f32$S parameter(1)
  z = f32$S parameter(2)
  ROOT f = f32$S fusion(x, y, z), kind=kLoop, calls=fused
}
)", {{"$S", absl::StrCat("[", n, "]")}});
  std::unique_ptr<Module> keep;
  auto prog = Compile(text, &keep);
  ASSERT_NE(prog, nullptr);
  EXPECT_EQ(prog->has_jit_path(), LevelGeneratesCode());
  Value x = F32({n}, 3), y = F32({n}, 4), z = F32({n}, 5);
  AddSpecials(&x, &y);
  ExpectSameEverywhere(*prog, {&x, &y, &z}, "chain");
}

// A random elementwise program over `params` parameters: `ops` ops from the emitted set, each
// reading earlier values, parameters or scalar constants; the last `outs` values (and
// sometimes a parameter) are the outputs. `wide` makes every value live to the end (a sum
// over all of them, then a max over them in reverse order).
std::string RandomText(std::mt19937* rng, int64_t n, int params, int ops, int outs, bool wide) {
  const char* unary[] = {"exponential", "tanh", "logistic", "sqrt", "rsqrt", "abs", "negate",
                         "floor", "ceil", "round-nearest-even", "erf"};
  const char* binary[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum"};
  const std::string shape = absl::StrCat("f32[", n, "]");
  std::string body;
  std::vector<std::string> vals;
  for (int p = 0; p < params; ++p) {
    absl::StrAppend(&body, "  p", p, " = ", shape, " parameter(", p, ")\n");
    vals.push_back(absl::StrCat("p", p));
  }
  auto pick = [&](int64_t lo) { return vals[std::uniform_int_distribution<size_t>(lo, vals.size() - 1)(*rng)]; };
  std::uniform_real_distribution<float> cval(-3.0f, 3.0f);
  for (int i = 0; i < ops; ++i) {
    const std::string name = absl::StrCat("v", i);
    // Wide programs read only parameters, so the values pile up until the final sum.
    const std::string a = pick(0);
    if ((*rng)() % 3 == 0) {
      absl::StrAppend(&body, "  ", name, " = ", shape, " ", unary[(*rng)() % std::size(unary)], "(", wide ? vals[(*rng)() % params] : a,
                      ")\n");
    } else if ((*rng)() % 4 == 0) {  // with a scalar constant
      absl::StrAppend(&body, "  c", i, " = f32[] constant(", cval(*rng), ")\n  b", i, " = ", shape, " broadcast(c", i,
                      "), dimensions={}\n  ", name, " = ", shape, " ", binary[(*rng)() % 6], "(b", i, ", ",
                      wide ? vals[(*rng)() % params] : a, ")\n");
    } else {
      absl::StrAppend(&body, "  ", name, " = ", shape, " ", binary[(*rng)() % 6], "(",
                      wide ? vals[(*rng)() % params] : a, ", ", wide ? vals[(*rng)() % params] : pick(0), ")\n");
    }
    if (!wide) vals.push_back(name);
  }
  std::vector<std::string> roots;
  if (wide) {  // a sum over v0..v(ops-1), then a max over them in reverse: all live at once
    std::string sum = "v0", max = absl::StrCat("v", ops - 1);
    for (int i = 1; i < ops; ++i) {
      absl::StrAppend(&body, "  s", i, " = ", shape, " add(", sum, ", v", i, ")\n");
      absl::StrAppend(&body, "  m", i, " = ", shape, " maximum(", max, ", v", ops - 1 - i, ")\n");
      sum = absl::StrCat("s", i);
      max = absl::StrCat("m", i);
    }
    absl::StrAppend(&body, "  w = ", shape, " subtract(", sum, ", ", max, ")\n");
    roots.push_back("w");
  } else {
    for (int k = 0; k < outs; ++k) roots.push_back(vals[vals.size() - 1 - k]);
    if ((*rng)() % 2) roots.push_back("p0");
  }
  std::string types, names;
  for (size_t k = 0; k < roots.size(); ++k) {
    absl::StrAppend(&types, k ? ", " : "", shape);
    absl::StrAppend(&names, k ? ", " : "", roots[k]);
  }
  std::string entry_params, operands;
  for (int p = 0; p < params; ++p) {
    absl::StrAppend(&entry_params, "  q", p, " = ", shape, " parameter(", p, ")\n");
    absl::StrAppend(&operands, p ? ", " : "", "q", p);
  }
  return absl::StrCat("HloModule r\nfused {\n", body, "  ROOT o = (", types, ") tuple(", names, ")\n}\nENTRY main {\n",
                      entry_params, "  ROOT f = (", types, ") fusion(", operands, "), kind=kLoop, calls=fused\n}\n");
}

// The random program of one trial of the tests below: 1-4 parameters of n elements, 3-22 ops,
// 1-3 outputs (RandomText).
struct RandomProgram {
  int params = 0;
  int64_t n = 0;
  std::string text;
};
RandomProgram NextRandomProgram(std::mt19937* rng) {
  RandomProgram r;
  r.params = 1 + static_cast<int>((*rng)() % 4);
  r.n = 256 * (1 + static_cast<int64_t>((*rng)() % 6)) + static_cast<int64_t>((*rng)() % 3) * 37;
  const int ops = 3 + static_cast<int>((*rng)() % 20), outs = 1 + static_cast<int>((*rng)() % 3);
  r.text = RandomText(rng, r.n, r.params, ops, outs, false);
  return r;
}

TEST(FusedJit, RandomProgramsMatchInterpreterAndBlockLoop) {
  std::mt19937 rng(7);
  int jitted = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const RandomProgram r = NextRandomProgram(&rng);
    const int params = r.params;
    const int64_t n = r.n;
    const std::string& text = r.text;
    std::unique_ptr<Module> keep;
    auto prog = Compile(text, &keep);
    ASSERT_NE(prog, nullptr) << text;
    jitted += prog->has_jit_path();
    std::vector<Value> vals;
    for (int p = 0; p < params; ++p) vals.push_back(F32({n}, 10 + p));
    if (params >= 2) AddSpecials(&vals[0], &vals[1]);
    std::vector<const Value*> args;
    for (const Value& v : vals) args.push_back(&v);
    ExpectSameEverywhere(*prog, args, text);
    if (HasFailure()) return;
  }
  if (LevelGeneratesCode()) EXPECT_GE(jitted, 30);  // most random programs stay within 8 streams
  else EXPECT_EQ(jitted, 0);
}

// 20 values live at once: more than AVX-512's 32 registers hold at 2 or 4 groups a step, so
// the compiler unrolls less (and more than AVX2's 16: left to the interpreter there); 40: more
// than 32 registers, left to the interpreter. Same bits.
TEST(FusedJit, RegisterPressureKeepsTheBits) {
  for (int live : {20, 40}) {
    std::mt19937 rng(11);
    const std::string text = RandomText(&rng, 1000, 3, live, 1, true);
    std::unique_ptr<Module> keep;
    auto prog = Compile(text, &keep);
    ASSERT_NE(prog, nullptr);
    EXPECT_EQ(prog->has_jit_path(), ActiveIsa() == IsaLevel::kAvx512 && live == 20) << text;
    Value a = F32({1000}, 1), b = F32({1000}, 2), c = F32({1000}, 3);
    AddSpecials(&a, &b);
    ExpectSameEverywhere(*prog, {&a, &b, &c}, text);
  }
}

// Every level's code generator, whatever this CPU runs: the AVX-512 emitter (zmm registers,
// opmasks, embedded broadcasts) must accept every op and register allocation the random
// programs need even on an AVX2 host, where its code cannot run, so an encoding the assembler
// refuses shows up in every CI run. (The bits of that code are checked where AVX-512 runs.)
TEST(FusedJit, EveryLevelsEmitterAcceptsEveryProgram) {
  std::mt19937 rng(7);
  int avx512 = 0, avx2 = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const std::string text = NextRandomProgram(&rng).text;
    std::unique_ptr<Module> keep;
    auto prog = Compile(text, &keep);
    ASSERT_NE(prog, nullptr) << text;
    avx512 += prog->jit_code_bytes_for(IsaLevel::kAvx512) > 0;
    avx2 += prog->jit_code_bytes_for(IsaLevel::kAvx2) > 0;
    EXPECT_EQ(prog->jit_code_bytes_for(IsaLevel::kGeneric), 0);
  }
  EXPECT_GE(avx512, 30);
  EXPECT_GE(avx2, 25);
  std::unique_ptr<Module> keep;
  auto every = Compile(EveryOpText(4099), &keep);
  ASSERT_NE(every, nullptr);
  EXPECT_GT(every->jit_code_bytes_for(IsaLevel::kAvx512), 0);
  EXPECT_GT(every->jit_code_bytes_for(IsaLevel::kAvx2), 0);
}

// Programs the generated code leaves to the interpreter: log, and more than kMaxStreams
// inputs plus outputs. They still run (and match the block loop).
TEST(FusedJit, ProgramsOutsideRunOnTheInterpreter) {
  std::unique_ptr<Module> keep;
  auto log_prog = Compile(R"(HloModule m
fused {
  x = f32[600] parameter(0)
  a = f32[600] abs(x)
  ROOT l = f32[600] log(a)
}
ENTRY main {
  x = f32[600] parameter(0)
  ROOT f = f32[600] fusion(x), kind=kLoop, calls=fused
}
)", &keep);
  ASSERT_NE(log_prog, nullptr);
  EXPECT_TRUE(log_prog->has_vector_path());
  EXPECT_FALSE(log_prog->has_jit_path());
  Value x = F32({600}, 1);
  ExpectSameEverywhere(*log_prog, {&x}, "log");

  std::string body, entry, operands, sum = "p0";
  for (int p = 0; p < 9; ++p) {
    absl::StrAppend(&body, "  p", p, " = f32[600] parameter(", p, ")\n");
    absl::StrAppend(&entry, "  q", p, " = f32[600] parameter(", p, ")\n");
    absl::StrAppend(&operands, p ? ", " : "", "q", p);
    if (p) {
      absl::StrAppend(&body, "  s", p, " = f32[600] add(", sum, ", p", p, ")\n");
      sum = absl::StrCat("s", p);
    }
  }
  std::unique_ptr<Module> keep9;
  auto wide = Compile(absl::StrCat("HloModule m\nfused {\n", body, "  ROOT r = f32[600] copy(", sum, ")\n}\nENTRY main {\n",
                                   entry, "  ROOT f = f32[600] fusion(", operands, "), kind=kLoop, calls=fused\n}\n"),
                      &keep9);
  ASSERT_NE(wide, nullptr);
  EXPECT_FALSE(wide->has_jit_path());
  std::vector<Value> vals;
  for (int p = 0; p < 9; ++p) vals.push_back(F32({600}, p));
  std::vector<const Value*> args;
  for (const Value& v : vals) args.push_back(&v);
  ExpectSameEverywhere(*wide, args, "nine inputs");
}

}  // namespace
}  // namespace hlox::rt
