// The simplifier on every real module of the corpus: finding sites never fails, the default
// policy and seeded random decision vectors give modules that verify and print/re-parse, the
// same module always gives the same site ids, and a run to a fixpoint terminates.
#include <map>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/passes.h"
#include "tests/test_util.h"

namespace hlox {
namespace {

TEST(SimplifyCorpus, SitesApplyAndVerify) {
  HLOX_REQUIRE_CORPUS();
  std::vector<std::string> files = testing::CorpusFiles();
  ASSERT_FALSE(files.empty());
  auto pass = CreateAlgebraicSimplifier();
  int64_t total_sites = 0, total_applied = 0, skipped = 0;
  std::map<std::string, int64_t> per_rule;
  std::mt19937 rng(42);
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    auto parsed = ParseModuleFile(path);
    // Parser and verifier coverage are tested elsewhere; count what we could not use.
    if (!parsed.ok() || !VerifyModule(**parsed).ok()) {
      ++skipped;
      continue;
    }
    auto sites = pass->FindSites(**parsed);
    ASSERT_TRUE(sites.ok()) << sites.status();
    total_sites += static_cast<int64_t>(sites->size());
    for (const DecisionSite& s : *sites) ++per_rule[s.rule];
    // Determinism of site ids across a clone.
    auto again = pass->FindSites(*(*parsed)->Clone());
    ASSERT_TRUE(again.ok());
    ASSERT_EQ(again->size(), sites->size());
    for (size_t k = 0; k < sites->size(); ++k) ASSERT_EQ((*again)[k].id, (*sites)[k].id);
    // One random decision vector, then the default policy to a fixpoint.
    std::unique_ptr<Module> m = (*parsed)->Clone();
    DecisionVector d;
    for (size_t k = 0; k < sites->size(); ++k) d.push_back(static_cast<int32_t>(rng() % 2));
    auto r = pass->Apply(*m, *sites, d);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m);
    for (int iter = 0; iter < 20; ++iter) {
      auto run = pass->Run(*m);
      ASSERT_TRUE(run.ok()) << run.status();
      total_applied += run->applied;
      if (!run->changed()) break;
      ASSERT_LT(iter, 19) << "no fixpoint after 20 runs";
    }
    ASSERT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m);
    auto reparsed = ParseModule(PrintModule(*m));
    ASSERT_TRUE(reparsed.ok()) << reparsed.status();
  }
  std::printf("corpus: %zu modules (%lld skipped), %lld sites, %lld rewrites by default runs\n",
              files.size(), static_cast<long long>(skipped), static_cast<long long>(total_sites),
              static_cast<long long>(total_applied));
  for (const auto& [rule, n] : per_rule) std::printf("  %s: %lld\n", rule.c_str(), static_cast<long long>(n));
  EXPECT_GT(total_sites, 0);
}

}  // namespace
}  // namespace hlox
