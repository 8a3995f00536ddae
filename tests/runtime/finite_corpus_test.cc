// Finite outputs on seeded inputs: a list of fast corpus modules must run with `hlox run`'s
// default seed (0) and give only finite float outputs, except the leaves on an explicit
// allow-list whose computation is not finite on seeded inputs (each entry says why). Also
// checks RunStats::on_value and `hlox run --check-finite`, which name the first instruction
// that makes a NaN/Inf.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <unistd.h>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "nlohmann/json.hpp"
#include "runtime/core/executor.h"
#include "runtime/core/finite.h"
#include "tests/test_util.h"

namespace hlox::rt {
namespace {

// Fast modules (well under a second each on 2 busy cores) that cover training steps,
// optimizers, decoders, normalizing flows and linear algebra.
const char* kFiniteList[] = {
    "hloenv_deeperwin_heaviside.hlo",      "hloenv_jaxrl_diag.hlo",
    "hloenv_jaxlie_round.hlo",             "hloenv_bayesnewton_cho_solve.hlo",
    "hloenv_muzero_var.hlo",               "hloenv_jaxrl_qr.hlo",
    "hloenv_toy_nn_loss.hlo",              "hloenv_jraph_gnn_accuracy.hlo",
    "hloenv_mlp_regression_train_step.hlo", "hloenv_maml_flax_train_step.hlo",
    "hloenv_gans_normal.hlo",              "alpa_embed_sgd_spmd_post.hlo",
    "alpa_truncated_normal_post.hlo",      "gh_linear_adam.hlo",
    "gh_simple_linear_train.hlo",          "gh_linear_tp4_pp8.hlo",
    "gh_bert_optimizer_tp1.hlo",           "gh_bert_fwd_bwd_bf16.hlo",
    "gh_gpt2_decode_tp1.hlo",              "hloenv_neural_tangents_cholesky.hlo",
};

// Output leaves allowed to hold NaN/Inf with seed 0, and why (found with --check-finite).
struct Allowed {
  const char* module;
  int leaf;  // -1: every leaf
  const char* why;
};
const Allowed kAllowed[] = {
    // cholesky of a seeded matrix that is not positive definite: XLA's result is NaN too.
    {"hloenv_neural_tangents_cholesky.hlo", 0, "cholesky of a non-positive-definite seeded input"},
    // The module returns its max-reduction init constant(-inf) as an output leaf.
    {"gh_gpt2_decode_tp1.hlo", 21, "output is the literal constant(-inf)"},
    // Gradient-norm clipping: power(sum / p9, 0.5) where the seeded accumulator p10 and divisor
    // p9 (uniform in [-1, 1)) make the sum negative; sqrt of a negative is NaN in XLA too.
    {"gh_linear_tp4_pp8.hlo", 4, "sqrt of a negative seeded norm accumulator"},
};

bool IsAllowed(const std::string& module, int leaf) {
  for (const Allowed& a : kAllowed) {
    if (module == a.module && (a.leaf < 0 || a.leaf == leaf)) return true;
  }
  return false;
}


TEST(FiniteCorpusTest, FastModulesHaveFiniteOutputsWithDefaultSeed) {
  HLOX_REQUIRE_CORPUS();
  std::set<std::string> allowed_seen;
  int ran = 0;
  for (const char* name : kFiniteList) {
    std::string path = hlox::testing::CorpusDir() + "/" + name;
    if (!std::filesystem::exists(path)) continue;
    SCOPED_TRACE(name);
    auto m = ParseModuleFile(path);
    ASSERT_TRUE(m.ok()) << m.status().message();
    ExecOptions o;
    o.threads = 2;
    o.seed = 0;  // `hlox run`'s default
    auto ex = Executor::Create(**m, o);
    ASSERT_TRUE(ex.ok()) << ex.status().message();
    auto out = (*ex)->Run(MakeSeededInputs(**m, 0));
    ASSERT_TRUE(out.ok()) << out.status().message();
    std::vector<BufferPtr> leaves;
    out->Flatten(&leaves);
    ASSERT_FALSE(leaves.empty());
    for (size_t i = 0; i < leaves.size(); ++i) {
      const NonFinite nf = CountNonFinite(*leaves[i]);
      const int64_t bad = nf.nan + nf.inf;
      if (IsAllowed(name, static_cast<int>(i))) {
        if (bad > 0) allowed_seen.insert(name);
        continue;
      }
      EXPECT_EQ(bad, 0) << "output " << i << " " << leaves[i]->shape().ToString(false);
    }
    ++ran;
  }
  ASSERT_GT(ran, 0);
  // The allow-list stays honest: each entry is still non-finite (else remove it).
  for (const Allowed& a : kAllowed) {
    if (std::filesystem::exists(hlox::testing::CorpusDir() + "/" + a.module)) {
      EXPECT_TRUE(allowed_seen.count(a.module)) << a.module << " is finite now; drop it from kAllowed";
    }
  }
}

// f16 seeds are uniform in [-1/8, 1/8) (wider ones overflow f16's 65504 in deep random-weight
// decoders), spread over that range, and still a pure function of (shape, seed).
TEST(FiniteCorpusTest, F16SeedsStayInAnEighth) {
  Shape s(PrimitiveType::kF16, {4096});
  Value a = MakeSeededValue(s, 5), b = MakeSeededValue(s, 5);
  ASSERT_EQ(std::memcmp(a.array->data(), b.array->data(), a.array->byte_size()), 0);
  Literal lit = LiteralFromValue(a, s);
  double lo = 1, hi = -1;
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    lo = std::min(lo, lit.GetAsDouble(i));
    hi = std::max(hi, lit.GetAsDouble(i));
  }
  EXPECT_GE(lo, -0.125);
  EXPECT_LE(hi, 0.125);
  EXPECT_LT(lo, -0.12);
  EXPECT_GT(hi, 0.12);
}

constexpr const char* kSqrtOfNegative = R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, -1, 4, 0})
  n = f32[] constant(-inf)
  a = f32[4] multiply(p, p)
  s = f32[4] sqrt(c)
  t = f32[4] add(a, s)
  r = f32[] reduce(a, n), dimensions={0}, to_apply=mx
  ROOT out = (f32[4], f32[]) tuple(t, r)
}
mx {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}
)";

TEST(FiniteCorpusTest, OnValueSeesEntryValuesInOrder) {
  auto m = ParseModule(kSqrtOfNegative);
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto ex = Executor::Create(**m, ExecOptions());
  ASSERT_TRUE(ex.ok());
  RunStats stats;
  std::vector<std::string> names;
  std::vector<bool> has_nan;
  stats.on_value = [&](const Instruction& instr, const Value& v) {
    names.push_back(instr.name());
    has_nan.push_back(v.is_array() && v.array->shape().element_type() == PrimitiveType::kF32 &&
                      std::isnan(v.array->as<float>()[1]));
  };
  ASSERT_TRUE((*ex)->Run(MakeSeededInputs(**m, 1), &stats).ok());
  auto pos = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
  ASSERT_EQ(names.size(), 8u);
  EXPECT_LT(pos("c"), pos("s"));
  EXPECT_LT(pos("s"), pos("t"));
  EXPECT_EQ(names.back(), "out");
  EXPECT_TRUE(has_nan[pos("s")]);  // sqrt(-1)
  EXPECT_FALSE(has_nan[pos("a")]);
}

TEST(FiniteCorpusTest, CheckFiniteNamesTheFirstInstructionMakingNaN) {
  namespace fs = std::filesystem;
  std::string bin = hlox::testing::HloxBinary();
  if (!fs::exists(bin)) GTEST_SKIP() << "hlox binary not built: " << bin;
  fs::path dir = fs::temp_directory_path() / ("hlox_check_finite_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "m.hlo");
    f << kSqrtOfNegative;
  }
  std::string cmd = bin + " run " + (dir / "m.hlo").string() + " --json --check-finite";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string text;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof(buf), p)) text.append(buf, n);
  EXPECT_EQ(::pclose(p), 0) << cmd;
  fs::remove_all(dir);
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << text;
  // The constant(-inf) is written on purpose and skipped; sqrt(c) makes the first NaN.
  const auto& f = j["first_non_finite"];
  ASSERT_TRUE(f.is_object()) << text;
  EXPECT_EQ(f["instruction"], "s");
  EXPECT_EQ(f["opcode"], "sqrt");
  EXPECT_EQ(f["nan"], 1);
  EXPECT_EQ(f["inf"], 0);
  ASSERT_EQ(f["operands"].size(), 1u);
  EXPECT_EQ(f["operands"][0]["name"], "c");
  EXPECT_EQ(f["operands"][0]["finite"], true);
}

// Corpus speed: AwsNeuronTransferWithStaticRing (74 calls in entangle_llama_decode_tp1_l8) is an
// identity; with an equal result shape it shares its operand's buffer instead of copying it.
TEST(FiniteCorpusTest, TransferWithStaticRingSharesItsOperand) {
  auto m = ParseModule(R"(HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  a = f32[2,3]{1,0} custom-call(p), custom_call_target="AwsNeuronTransferWithStaticRing"
  b = f32[6]{0} custom-call(p), custom_call_target="AwsNeuronTransferWithStaticRing"
  ROOT t = (f32[2,3]{1,0}, f32[6]{0}, f32[2,3]{1,0}) tuple(a, b, p)
}
)");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto ex = Executor::Create(**m, ExecOptions());
  ASSERT_TRUE(ex.ok());
  auto out = (*ex)->Run(MakeSeededInputs(**m, 4));
  ASSERT_TRUE(out.ok()) << out.status().message();
  std::vector<BufferPtr> l;
  out->Flatten(&l);
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0].get(), l[2].get());  // same shape: shared, no copy
  EXPECT_NE(l[1].get(), l[2].get());  // other shape: a copy with its own shape
  EXPECT_EQ(l[1]->shape().ToString(false), "f32[6]");
  EXPECT_EQ(std::memcmp(l[1]->data(), l[2]->data(), 24), 0);
}

}  // namespace
}  // namespace hlox::rt
