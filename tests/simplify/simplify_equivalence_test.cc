// Semantics check of every simplifier rule by execution: each positive case is run before and
// after applying that rule's sites, on several seeded inputs, and the outputs must agree
// (exactly for integers and pred, within a small relative tolerance for floats; NaN = NaN).
// Also the pass-pairs check: on XLA's before files, our simplifier + CSE + DCE must remove at
// least as many instructions as XLA's pass did, with equal outputs.
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/passes.h"
#include "runtime/core/executor.h"
#include "tests/simplify/simp_cases.h"
#include "tests/test_util.h"

namespace hlox {
namespace {

constexpr size_t kMaxSampleBytes = 45000;

// Runs the entry computation on `inputs`.
absl::StatusOr<rt::Value> RunSeeded(const Module& m, const std::vector<rt::Value>& inputs) {
  auto ex = rt::Executor::Create(m, rt::ExecOptions{1, 7});
  if (!ex.ok()) return ex.status();
  return (*ex)->Run(inputs);
}

// Compares two values leaf by leaf; returns "" when equal, else a description.
std::string Compare(const rt::Value& a, const rt::Value& b) {
  std::vector<rt::BufferPtr> la, lb;
  a.Flatten(&la);
  b.Flatten(&lb);
  if (la.size() != lb.size()) return "leaf count differs";
  for (size_t k = 0; k < la.size(); ++k) {
    if (!la[k]->shape().SameDimensions(lb[k]->shape()) ||
        la[k]->shape().element_type() != lb[k]->shape().element_type()) {
      return absl::StrCat("leaf ", k, " shape ", la[k]->shape().ToString(), " vs ", lb[k]->shape().ToString());
    }
    rt::Value va = rt::Value::Array(la[k]), vb = rt::Value::Array(lb[k]);
    Literal x = rt::LiteralFromValue(va, la[k]->shape());
    Literal y = rt::LiteralFromValue(vb, lb[k]->shape());
    bool is_float = IsFloatingPoint(la[k]->shape().element_type());
    for (int64_t e = 0; e < x.element_count(); ++e) {
      double u = x.GetAsDouble(e), v = y.GetAsDouble(e);
      if (is_float) {
        if (std::isnan(u) && std::isnan(v)) continue;
        if (u == v) continue;
        if (std::fabs(u - v) <= 1e-5 + 1e-4 * std::fabs(v)) continue;
      } else if (x.GetAsUint64(e) == y.GetAsUint64(e)) {
        continue;
      }
      return absl::StrCat("leaf ", k, " element ", e, ": ", u, " vs ", v);
    }
  }
  return "";
}

TEST(SimplifyEquivalence, EveryPositiveCase) {
  auto pass = CreateAlgebraicSimplifier();
  for (const testing::SimpCase& c : testing::SimpCases()) {
    if (!c.positive) continue;
    SCOPED_TRACE(c.rule);
    auto before = ParseModule(testing::WrapEntry(c.body));
    auto after = ParseModule(testing::WrapEntry(c.body));
    ASSERT_TRUE(before.ok() && after.ok());
    auto sites = pass->FindSites(**after);
    ASSERT_TRUE(sites.ok());
    DecisionVector d;
    for (const DecisionSite& s : *sites) d.push_back(s.rule == c.rule ? 1 : 0);
    ASSERT_TRUE(pass->Apply(**after, *sites, d).ok());
    // Also every site of every rule, to a fixpoint, on a second copy.
    auto all = ParseModule(testing::WrapEntry(c.body));
    ASSERT_TRUE(all.ok());
    for (int iter = 0; iter < 10; ++iter) {
      auto all_sites = pass->FindSites(**all);
      ASSERT_TRUE(all_sites.ok());
      auto r = pass->Apply(**all, *all_sites, DecisionVector(all_sites->size(), 1));
      ASSERT_TRUE(r.ok()) << r.status();
      if (!r->changed()) break;
    }
    ASSERT_TRUE(VerifyModule(**all).ok()) << VerifyModule(**all);
    for (uint64_t seed : {1, 2, 3}) {
      std::vector<rt::Value> in = rt::MakeSeededInputs(**before, seed);
      auto want = RunSeeded(**before, in);
      ASSERT_TRUE(want.ok()) << want.status();
      auto got = RunSeeded(**after, in);
      ASSERT_TRUE(got.ok()) << got.status() << "\n" << PrintModule(**after);
      EXPECT_EQ(Compare(*got, *want), "") << PrintModule(**after);
      auto got_all = RunSeeded(**all, in);
      ASSERT_TRUE(got_all.ok()) << got_all.status() << "\n" << PrintModule(**all);
      EXPECT_EQ(Compare(*got_all, *want), "") << PrintModule(**all);
    }
  }
}

// Simplifier, CSE and DCE to a fixpoint (capped).
int64_t Optimize(Module& m) {
  std::vector<std::unique_ptr<Pass>> passes;
  passes.push_back(CreateAlgebraicSimplifier());
  passes.push_back(CreateCse());
  passes.push_back(CreateDce());
  for (int iter = 0; iter < 10; ++iter) {
    bool changed = false;
    for (auto& p : passes) {
      auto r = p->Run(m);
      EXPECT_TRUE(r.ok()) << p->name() << ": " << r.status();
      if (!r.ok()) return -1;
      changed |= r->changed();
    }
    if (!changed) break;
  }
  return m.InstructionCount();
}

TEST(SimplifyEquivalence, PassPairsRemoveAtLeastAsMuchAsXla) {
  HLOX_REQUIRE_CORPUS();
  int pairs = 0;
  for (const std::string& path : testing::PassPairFiles()) {
    for (const char* kind : {"_algsimp.before.hlo", "_cse.before.hlo", "_dce.before.hlo"}) {
      if (path.size() < strlen(kind) || path.compare(path.size() - strlen(kind), strlen(kind), kind) != 0) continue;
      std::string after_path = path.substr(0, path.size() - strlen(".before.hlo")) + ".after.hlo";
      SCOPED_TRACE(path);
      auto before = ParseModuleFile(path);
      auto xla = ParseModuleFile(after_path);
      ASSERT_TRUE(before.ok() && xla.ok());
      std::unique_ptr<Module> ours = (*before)->Clone();
      int64_t n = Optimize(*ours);
      ASSERT_GE(n, 0);
      EXPECT_TRUE(VerifyModule(*ours).ok()) << VerifyModule(*ours);
      int64_t n_before = (*before)->InstructionCount(), n_xla = (*xla)->InstructionCount();
      std::printf("%s: before %lld, xla %lld, ours %lld\n", path.c_str(), static_cast<long long>(n_before),
                  static_cast<long long>(n_xla), static_cast<long long>(n));
      EXPECT_GE(n_before - n, n_before - n_xla);
      std::vector<rt::Value> in = rt::MakeSeededInputs(**before, 5);
      auto want = RunSeeded(**before, in);
      ASSERT_TRUE(want.ok()) << want.status();
      auto got = RunSeeded(*ours, in);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(Compare(*got, *want), "");
      ++pairs;
    }
  }
  EXPECT_GE(pairs, 1);
}

// A sample of the corpus (the smaller modules that have sites, to keep the test fast): one seeded random
// decision vector, then the default policy to a fixpoint; outputs must equal the original's.
TEST(SimplifyEquivalence, CorpusSample) {
  HLOX_REQUIRE_CORPUS();
  auto pass = CreateAlgebraicSimplifier();
  int checked = 0, rewrites = 0;
  uint32_t state = 12345;
  for (const std::string& path : testing::CorpusFiles()) {
    std::string text = testing::ReadFileOrDie(path);
    if (text.size() > kMaxSampleBytes) continue;
    SCOPED_TRACE(path);
    auto before = ParseModule(text, path);
    ASSERT_TRUE(before.ok()) << before.status();
    std::unique_ptr<Module> ours = (*before)->Clone();
    auto sites = pass->FindSites(*ours);
    ASSERT_TRUE(sites.ok());
    if (sites->empty()) continue;  // nothing to check
    std::vector<rt::Value> in = rt::MakeSeededInputs(**before, 11);
    auto want = RunSeeded(**before, in);
    if (!want.ok()) continue;  // runtime coverage is tested elsewhere
    DecisionVector d;
    for (size_t k = 0; k < sites->size(); ++k) {
      state = state * 1664525u + 1013904223u;
      d.push_back(static_cast<int32_t>((state >> 16) & 1));
    }
    auto r = pass->Apply(*ours, *sites, d);
    ASSERT_TRUE(r.ok()) << r.status();
    rewrites += static_cast<int>(r->applied);
    for (int iter = 0; iter < 10; ++iter) {
      auto run = pass->Run(*ours);
      ASSERT_TRUE(run.ok()) << run.status();
      rewrites += static_cast<int>(run->applied);
      if (!run->changed()) break;
    }
    ASSERT_TRUE(VerifyModule(*ours).ok()) << VerifyModule(*ours);
    auto got = RunSeeded(*ours, in);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(Compare(*got, *want), "");
    ++checked;
  }
  std::printf("corpus sample: %d modules executed before/after, %d rewrites\n", checked, rewrites);
  EXPECT_GE(checked, 1);
}

}  // namespace
}  // namespace hlox
