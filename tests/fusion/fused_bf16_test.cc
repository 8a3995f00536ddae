// Fused f32/bf16/f16 math against the unfused elementwise kernels, bit for bit: one module
// with a chain of exp, log, log1p, expm1, tanh, logistic and arithmetic, run once as a fusion
// (the register path for f32/bf16/f16) and once unfused, on 1 and 2
// threads. bf16/f16 values are computed in f32 and rounded after each op on both sides.
#include <cstring>
#include <string>

#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/core/executor.h"

namespace hlox::rt {
namespace {

// The chain over T[n]; as a fusion when `fused`, else as plain entry instructions.
std::string Module(const std::string& type, int64_t n, bool fused) {
  const std::string body = R"(  x = $T[$N] parameter(0)
  y = $T[$N] parameter(1)
  e = $T[$N] exponential(x)
  ay = $T[$N] abs(y)
  l = $T[$N] log(ay)
  lp = $T[$N] log-plus-one(ay)
  em = $T[$N] exponential-minus-one(x)
  t = $T[$N] tanh(y)
  g = $T[$N] logistic(x)
  a = $T[$N] add(e, l)
  b = $T[$N] multiply(lp, em)
  c = $T[$N] subtract(t, g)
  d = $T[$N] add(a, b)
  ROOT r = $T[$N] divide(d, c)
)";
  std::string text = fused ? "HloModule f\nfused {\n" + body +
                                 "}\nENTRY main {\n  p0 = $T[$N] parameter(0)\n  p1 = $T[$N] parameter(1)\n"
                                 "  ROOT f = $T[$N] fusion(p0, p1), kind=kLoop, calls=fused\n}\n"
                           : "HloModule u\nENTRY main {\n" + body + "}\n";
  return absl::StrReplaceAll(text, {{"$T", type}, {"$N", std::to_string(n)}});
}

TEST(FusedBf16, FusedMatchesUnfusedKernelsBitForBit) {
  for (const char* type : {"f32", "bf16", "f16"}) {
    const int64_t n = 4099;
    auto fm = ParseModule(Module(type, n, true));
    auto um = ParseModule(Module(type, n, false));
    ASSERT_TRUE(fm.ok() && um.ok()) << type;
    std::vector<Value> in = MakeSeededInputs(**um, 3);
    for (int threads : {1, 2}) {
      auto fe = Executor::Create(**fm, ExecOptions{threads, 1});
      auto ue = Executor::Create(**um, ExecOptions{threads, 1});
      ASSERT_TRUE(fe.ok() && ue.ok());
      auto f = (*fe)->Run(in);
      auto u = (*ue)->Run(in);
      ASSERT_TRUE(f.ok() && u.ok()) << type;
      const Buffer& fb = *f->array;
      const Buffer& ub = *u->array;
      ASSERT_EQ(fb.byte_size(), ub.byte_size());
      const int64_t es = fb.byte_size() / n;
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(0, std::memcmp(static_cast<const uint8_t*>(fb.data()) + i * es,
                                 static_cast<const uint8_t*>(ub.data()) + i * es, es))
            << type << " element " << i << " threads " << threads;
      }
    }
  }
}

}  // namespace
}  // namespace hlox::rt
