// Rule-by-rule tests of the algebraic simplifier: for every rule, HLO text in, only that
// rule's sites applied, the entry root's structure checked, the module re-verified; and a
// negative case where the rule must not be offered. Also the pass-level contracts: site ids,
// default choices, invalid decisions, stale sites and rule-table coverage.
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/passes.h"
#include "passes/pipeline.h"
#include "passes/simplify/rule.h"
#include "tests/simplify/simp_cases.h"

namespace hlox {
namespace {

using testing::SimpCase;
using testing::SimpCases;
using testing::WrapEntry;

// Structure of a value: parameters by name, constants as "const", else opcode(operands).
std::string Summary(const Instruction& i) {
  if (i.opcode() == Opcode::kParameter) return i.name();
  if (i.opcode() == Opcode::kConstant) return "const";
  std::vector<std::string> ops;
  for (const Instruction* o : i.operands()) ops.push_back(Summary(*o));
  return absl::StrCat(std::string(OpcodeName(i.opcode())), "(", absl::StrJoin(ops, ","), ")");
}

std::vector<DecisionSite> SitesOf(Pass& pass, const Module& m) {
  auto sites = pass.FindSites(m);
  EXPECT_TRUE(sites.ok()) << sites.status();
  return sites.ok() ? *sites : std::vector<DecisionSite>{};
}

std::string CaseName(const SimpCase& c, size_t k) {
  return absl::StrCat(c.rule, c.positive ? "/positive#" : "/negative#", k);
}

TEST(SimplifyRules, EveryCase) {
  auto pass = CreateAlgebraicSimplifier();
  for (size_t k = 0; k < SimpCases().size(); ++k) {
    const SimpCase& c = SimpCases()[k];
    SCOPED_TRACE(CaseName(c, k));
    auto m = ParseModule(WrapEntry(c.body));
    ASSERT_TRUE(m.ok()) << m.status();
    ASSERT_TRUE(VerifyModule(**m).ok()) << VerifyModule(**m);
    std::vector<DecisionSite> sites = SitesOf(*pass, **m);
    DecisionVector d;
    int matching = 0;
    for (const DecisionSite& s : sites) {
      bool mine = s.rule == c.rule;
      matching += mine;
      d.push_back(mine ? 1 : 0);
    }
    if (!c.positive) {
      EXPECT_EQ(matching, 0) << "rule fired on its negative case";
      continue;
    }
    ASSERT_GT(matching, 0) << "rule did not fire";
    Shape root_shape = (*m)->entry()->root()->shape();
    auto report = pass->Apply(**m, sites, d);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->applied, matching);
    EXPECT_TRUE(VerifyModule(**m).ok()) << VerifyModule(**m) << "\n" << PrintModule(**m);
    EXPECT_EQ(Summary(*(*m)->entry()->root()), c.expect) << PrintModule(**m);
    EXPECT_EQ((*m)->entry()->root()->shape(), root_shape);
    // Printing re-parses (def-before-use order kept).
    EXPECT_TRUE(ParseModule(PrintModule(**m)).ok()) << PrintModule(**m);
  }
}

TEST(SimplifyRules, EveryRuleHasPositiveAndNegativeCase) {
  std::set<std::string> pos, neg;
  for (const SimpCase& c : SimpCases()) (c.positive ? pos : neg).insert(c.rule);
  EXPECT_GE(simp::AllRules().size(), 40u);
  std::set<std::string> names;
  for (const simp::SimpRule& r : simp::AllRules()) {
    EXPECT_TRUE(names.insert(std::string(r.name)).second) << "duplicate rule " << r.name;
    EXPECT_TRUE(pos.count(std::string(r.name))) << "no positive case for " << r.name;
    EXPECT_TRUE(neg.count(std::string(r.name))) << "no negative case for " << r.name;
  }
}

constexpr char kChain[] = R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  c1 = f32[] constant(1)
  b1 = f32[4] broadcast(c1), dimensions={}
  m = f32[4] multiply(x, b1)
  n = f32[4] negate(m)
  ROOT r = f32[4] negate(n)
})";

// clamp_in_range on device ids uses the header's counts: partition-id lies in [0, 3] with
// num_partitions=4, so clamp(0, id, 3) goes and clamp(0, id, 2) stays; replica-id likewise.
TEST(SimplifyPass, DeviceIdClampUsesHeaderCounts) {
  auto m = ParseModule(R"(HloModule m, replica_count=2, num_partitions=4
ENTRY e {
  p = u32[] partition-id()
  r = u32[] replica-id()
  lo = u32[] constant(0)
  hi3 = u32[] constant(3)
  hi2 = u32[] constant(2)
  hi1 = u32[] constant(1)
  a = u32[] clamp(lo, p, hi3)
  b = u32[] clamp(lo, p, hi2)
  c = u32[] clamp(lo, r, hi1)
  ROOT t = (u32[], u32[], u32[]) tuple(a, b, c)
})");
  ASSERT_TRUE(m.ok()) << m.status();
  auto pass = CreateAlgebraicSimplifier();
  std::vector<std::string> ids;
  for (const DecisionSite& s : SitesOf(*pass, **m)) ids.push_back(s.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"simp:clamp_in_range:a", "simp:clamp_in_range:c"}));
}

TEST(SimplifyPass, SiteIdsChoicesAndDefaults) {
  auto m = ParseModule(kChain);
  ASSERT_TRUE(m.ok()) << m.status();
  auto pass = CreateAlgebraicSimplifier();
  std::vector<DecisionSite> sites = SitesOf(*pass, **m);
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].id, "simp:mul_one:m");
  EXPECT_EQ(sites[1].id, "simp:neg_neg:r");
  EXPECT_EQ(sites[1].instructions, (std::vector<std::string>{"r", "n"}));
  EXPECT_EQ(sites[0].choices, (std::vector<std::string>{"keep", "apply"}));
  EXPECT_EQ(sites[0].default_choice, 1);
  EXPECT_EQ(sites[0].computation, "e");
  EXPECT_EQ(sites[0].features.size(), 3u);
  // Deterministic: a re-parse gives the same sites.
  auto m2 = ParseModule(kChain);
  ASSERT_TRUE(m2.ok());
  std::vector<DecisionSite> again = SitesOf(*pass, **m2);
  ASSERT_EQ(again.size(), sites.size());
  for (size_t k = 0; k < sites.size(); ++k) EXPECT_EQ(again[k].id, sites[k].id);
  // Default run: multiply and both negates gone, dead constant chain removed too.
  auto report = pass->Run(**m);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->applied, 2);
  EXPECT_EQ(Summary(*(*m)->entry()->root()), "x");
  EXPECT_EQ((*m)->entry()->instruction_count(), 1) << PrintModule(**m);
}

TEST(SimplifyPass, KeepLeavesModuleUnchanged) {
  auto m = ParseModule(kChain);
  ASSERT_TRUE(m.ok());
  std::string before = PrintModule(**m);
  auto pass = CreateAlgebraicSimplifier();
  std::vector<DecisionSite> sites = SitesOf(*pass, **m);
  auto report = pass->Apply(**m, sites, DecisionVector(sites.size(), 0));
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->changed());
  EXPECT_EQ(PrintModule(**m), before);
}

TEST(SimplifyPass, InvalidDecisions) {
  auto m = ParseModule(kChain);
  ASSERT_TRUE(m.ok());
  auto pass = CreateAlgebraicSimplifier();
  std::vector<DecisionSite> sites = SitesOf(*pass, **m);
  auto short_vec = pass->Apply(**m, sites, {1});
  EXPECT_TRUE(IsInvalidDecisions(short_vec.status())) << short_vec.status();
  auto out_of_range = pass->Apply(**m, sites, {1, 2});
  EXPECT_TRUE(IsInvalidDecisions(out_of_range.status())) << out_of_range.status();
  std::vector<DecisionSite> bogus = sites;
  bogus[0].rule = "no_such_rule";
  auto unknown = pass->Apply(**m, bogus, {1, 0});
  EXPECT_TRUE(IsInvalidDecisions(unknown.status())) << unknown.status();
}

// The pipeline registry builds this pass for "simplify" (not a stand-in).
TEST(SimplifyPass, PipelineUsesSimplifier) {
  auto m = ParseModule(kChain);
  ASSERT_TRUE(m.ok());
  auto pass = CreatePassByLabel("simplify");
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ((*pass)->name(), "simplify");
  auto sites = (*pass)->FindSites(**m);
  ASSERT_TRUE(sites.ok());
  EXPECT_EQ(sites->size(), 2u);
  auto out = RunPipeline(**m, "simplify-only", {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Summary(*(*out)->entry()->root()), "x");
  EXPECT_EQ((*out)->entry()->instruction_count(), 1) << PrintModule(**out);
}

// Sites naming instructions the module does not have are stale, not errors.
TEST(SimplifyPass, UnknownInstructionIsStale) {
  auto m = ParseModule(kChain);
  ASSERT_TRUE(m.ok());
  auto pass = CreateAlgebraicSimplifier();
  std::vector<DecisionSite> sites = SitesOf(*pass, **m);
  sites[0].instructions = {"no_such_instruction"};
  auto report = pass->Apply(**m, sites, {1, 1});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->applied, 1);
  EXPECT_EQ(report->stale, (std::vector<std::string>{sites[0].id}));
  EXPECT_EQ(Summary(*(*m)->entry()->root()), "multiply(x,broadcast(const))");
}

// Two rules on one anchor: the first applied makes the second stale.
TEST(SimplifyPass, OverlappingSitesAreStale) {
  auto m = ParseModule(WrapEntry("x = f32[8] parameter(0)\ni = s32[] constant(0)\n"
                                 "ROOT r = f32[8] dynamic-slice(x, i), dynamic_slice_sizes={8}\n"));
  ASSERT_TRUE(m.ok()) << m.status();
  auto pass = CreateAlgebraicSimplifier();
  std::vector<DecisionSite> sites = SitesOf(*pass, **m);
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].rule, "dynamic_slice_full");
  EXPECT_EQ(sites[1].rule, "dynamic_slice_const");
  auto report = pass->Run(**m);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->applied, 1);
  EXPECT_EQ(report->stale, (std::vector<std::string>{sites[1].id}));
  EXPECT_EQ(Summary(*(*m)->entry()->root()), "x");
}

// A site whose inner instruction was replaced earlier is stale: neg_neg on r looks through
// n, which the earlier neg_neg site on n replaced.
TEST(SimplifyPass, InnerReplacedIsStale) {
  auto m = ParseModule(WrapEntry("x = f32[4] parameter(0)\na = f32[4] negate(x)\nn = f32[4] negate(a)\n"
                                 "ROOT r = f32[4] negate(n)\n"));
  ASSERT_TRUE(m.ok());
  auto pass = CreateAlgebraicSimplifier();
  auto report = pass->Run(**m);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->applied, 1);
  EXPECT_EQ(report->stale.size(), 1u);
  EXPECT_EQ(Summary(*(*m)->entry()->root()), "negate(x)");
}

// Layouts: an operand with another layout never replaces the instruction directly.
TEST(SimplifyPass, LayoutMismatchKeepsShape) {
  auto m = ParseModule(WrapEntry("x = f32[2,3]{0,1} parameter(0)\nc = f32[] constant(1)\n"
                                 "b = f32[2,3]{1,0} broadcast(c), dimensions={}\n"
                                 "ROOT r = f32[2,3]{1,0} multiply(x, b)\n"));
  ASSERT_TRUE(m.ok()) << m.status();
  auto pass = CreateAlgebraicSimplifier();
  std::vector<DecisionSite> sites = SitesOf(*pass, **m);
  for (const DecisionSite& s : sites) EXPECT_NE(s.rule, "mul_one");
}

TEST(SimplifyPass, PreexistingDeadCodeLeftForDce) {
  auto m = ParseModule(WrapEntry("x = f32[4] parameter(0)\nd = f32[4] exponential(x)\n"
                                 "n = f32[4] negate(x)\nROOT r = f32[4] negate(n)\n"));
  ASSERT_TRUE(m.ok());
  auto pass = CreateAlgebraicSimplifier();
  ASSERT_TRUE(pass->Run(**m).ok());
  bool has_dead = false;
  for (const auto& i : (*m)->entry()->instructions()) has_dead |= i->name() == "d";
  EXPECT_TRUE(has_dead);
  EXPECT_EQ((*m)->entry()->instruction_count(), 2);  // x, d
}

}  // namespace
}  // namespace hlox
