// Pipelines, decision files, next decision points, graph features and pass ordering.
#include <algorithm>
#include <memory>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "nlohmann/json.hpp"
#include "passes/dataset.h"
#include "passes/decisions_io.h"
#include "passes/features.h"
#include "passes/module_util.h"
#include "passes/pass_order.h"
#include "passes/pipeline.h"

namespace hlox {
namespace {

constexpr char kModule[] = R"(
HloModule small

helper {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}

ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  x1 = f32[4] add(a, b)
  x2 = f32[4] add(a, b)
  dead = f32[4] multiply(a, a)
  c = f32[4] call(x2), to_apply=helper
  t = (f32[4], f32[4]) tuple(x1, c)
  g = f32[4] get-tuple-element(t), index=1
  ROOT r = f32[4] subtract(x1, g)
}
)";

std::unique_ptr<Module> Parse(const char* text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

TEST(PipelineTest, NoneLeavesTheModuleUnchanged) {
  auto m = Parse(kModule);
  ASSERT_NE(m, nullptr);
  auto out = RunPipeline(*m, "none", {});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(PrintModule(**out), PrintModule(*m));
}

TEST(PipelineTest, NoFuseSimplifiesEverything) {
  auto m = Parse(kModule);
  ASSERT_NE(m, nullptr);
  PipelineReport report;
  auto out = RunPipeline(*m, "no-fuse", {}, &report);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(VerifyModule(**out).ok());
  // inline, CSE (x2), tuple-simplify (g), DCE (dead, t): at most add, negate, subtract remain
  // (the algebraic simplifier may fold x - (-x) further).
  EXPECT_LE(OpCount(**out), 3);
  for (const auto& i : (*out)->entry()->instructions()) {
    EXPECT_NE(i->opcode(), Opcode::kCall);
    EXPECT_NE(i->opcode(), Opcode::kTuple);
    EXPECT_NE(i->name(), "dead");
    EXPECT_NE(i->name(), "x2");
  }
  EXPECT_EQ((*out)->computations().size(), 1u);
  ASSERT_FALSE(report.invocations.empty());
  // XLA's CPU order: the expanders, then inline, then the simplification fixpoint.
  std::vector<std::string> keys;
  for (const auto& inv : report.invocations) keys.push_back(inv.key);
  const auto at = [&keys](const std::string& key) { return std::find(keys.begin(), keys.end(), key) - keys.begin(); };
  EXPECT_EQ(keys[0], "operand-upcaster#0");
  EXPECT_LT(at("map-inliner#0"), at("inline#0"));
  EXPECT_LT(at("inline#0"), at("simplify#0"));
  EXPECT_LT(at("simplify#0"), at("cse#0"));
  EXPECT_LT(at("cse#0"), at("transpose-folding#0"));
  EXPECT_EQ(std::count(keys.begin(), keys.end(), "fusion#0"), 0);  // no-fuse
}

TEST(PipelineTest, DecisionsAddressInvocations) {
  auto m = Parse(kModule);
  ASSERT_NE(m, nullptr);
  // Keep the call: the helper computation survives.
  auto out = RunPipeline(*m, "no-fuse", {{"inline#0", {0}}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)->computations().size(), 2u);
}

TEST(PipelineTest, BadDecisionsAreInvalidDecisions) {
  auto m = Parse(kModule);
  ASSERT_NE(m, nullptr);
  auto unknown = RunPipeline(*m, "no-fuse", {{"fusion#0", {1}}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(IsInvalidDecisions(unknown.status()));
  EXPECT_NE(std::string(unknown.status().message()).find("fusion#0"), std::string::npos);
  auto never = RunPipeline(*m, "no-fuse", {{"cse#7", {1}}});
  EXPECT_TRUE(IsInvalidDecisions(never.status()));
  auto length = RunPipeline(*m, "no-fuse", {{"inline#0", {1, 1}}});
  ASSERT_FALSE(length.ok());
  EXPECT_TRUE(IsInvalidDecisions(length.status()));
  EXPECT_NE(std::string(length.status().message()).find("inline#0"), std::string::npos);
  auto range = RunPipeline(*m, "no-fuse", {{"inline#0", {5}}});
  EXPECT_TRUE(IsInvalidDecisions(range.status()));
  auto pipeline = RunPipeline(*m, "nope", {});
  EXPECT_FALSE(pipeline.ok());
  EXPECT_FALSE(IsInvalidDecisions(pipeline.status()));
}

TEST(PipelineTest, NextDecisionPointWalksInvocations) {
  auto m = Parse(kModule);
  ASSERT_NE(m, nullptr);
  auto p0 = NextDecisionPoint(*m, "no-fuse", {});
  ASSERT_TRUE(p0.ok());
  ASSERT_TRUE(p0->has_value());
  EXPECT_EQ((*p0)->key, "inline#0");
  EXPECT_EQ((*p0)->sites.size(), 1u);
  auto p1 = NextDecisionPoint(*m, "no-fuse", {{"inline#0", {1}}});
  ASSERT_TRUE(p1.ok());
  ASSERT_TRUE(p1->has_value());
  EXPECT_NE((*p1)->key, "inline#0");
}

TEST(PipelineTest, ListDecisionPointsListsTheWholeRun) {
  auto m = Parse(kModule);
  ASSERT_NE(m, nullptr);
  auto all = ListDecisionPoints(*m, "no-fuse", {});
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_FALSE(all->empty());
  auto next = NextDecisionPoint(*m, "no-fuse", {});
  ASSERT_TRUE(next.ok() && next->has_value());
  // The first point is the next decision point, with the same sites.
  EXPECT_EQ((*all)[0].key, (*next)->key);
  EXPECT_EQ((*all)[0].pass, "inline");
  EXPECT_FALSE((*all)[0].decided);
  ASSERT_EQ((*all)[0].sites.size(), (*next)->sites.size());
  EXPECT_EQ((*all)[0].sites[0].id, (*next)->sites[0].id);
  for (const DecisionPointSites& p : *all) {
    EXPECT_FALSE(p.sites.empty()) << p.key;
    EXPECT_EQ(p.key.rfind(p.pass + "#", 0), 0u) << p.key;
  }
  // Deciding the first point marks it; the defaults for every point reproduce the default run.
  PipelineDecisions defaults;
  for (const DecisionPointSites& p : *all) defaults[p.key] = DefaultDecisions(p.sites);
  auto given = ListDecisionPoints(*m, "no-fuse", {{(*all)[0].key, defaults[(*all)[0].key]}});
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_TRUE((*given)[0].decided);
  for (size_t k = 1; k < given->size(); ++k) EXPECT_FALSE((*given)[k].decided);
  auto full = ListDecisionPoints(*m, "no-fuse", defaults);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(full->size(), all->size());
  for (const DecisionPointSites& p : *full) EXPECT_TRUE(p.decided) << p.key;
  // Wrong lengths and unknown pipelines fail as RunPipeline does.
  auto wrong = ListDecisionPoints(*m, "no-fuse", {{(*all)[0].key, {0, 0, 0, 0, 0}}});
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(IsInvalidDecisions(wrong.status()));
  auto nope = ListDecisionPoints(*m, "nope", {});
  ASSERT_FALSE(nope.ok());
  EXPECT_FALSE(IsInvalidDecisions(nope.status()));
}

TEST(FeaturesTest, DecisionPointsJsonHasKeyPassDecidedAndSites) {
  auto m = Parse(kModule);
  ASSERT_NE(m, nullptr);
  auto all = ListDecisionPoints(*m, "no-fuse", {});
  ASSERT_TRUE(all.ok()) << all.status();
  nlohmann::json j = nlohmann::json::parse(DecisionPointsToJson(*all));
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), all->size());
  EXPECT_EQ(j[0]["key"], (*all)[0].key);
  EXPECT_EQ(j[0]["pass"], "inline");
  EXPECT_EQ(j[0]["decided"], false);
  EXPECT_EQ(j[0]["sites"], nlohmann::json::parse(SitesToJson((*all)[0].sites)));
  EXPECT_EQ(j[0]["sites"][0]["choices"][0], "keep");
  EXPECT_EQ(nlohmann::json::parse(DecisionPointToJson((*all)[0])), j[0]);
}

TEST(PipelineTest, Deterministic) {
  auto m = Parse(kModule);
  ASSERT_NE(m, nullptr);
  for (const std::string& name : PipelineNames()) {
    auto a = RunPipeline(*m, name, {});
    auto b = RunPipeline(*m, name, {});
    ASSERT_TRUE(a.ok() && b.ok()) << name;
    EXPECT_EQ(PrintModule(**a), PrintModule(**b)) << name;
    EXPECT_TRUE(VerifyModule(**a).ok()) << name;
  }
}

TEST(DecisionsIoTest, JsonAndCompactRoundTrip) {
  auto j = ParseDecisions(R"({"pipeline": "default", "decisions": {"fusion#0": [1,0,1], "cse#1": []}})");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->pipeline, "default");
  EXPECT_EQ(j->decisions.at("fusion#0"), (DecisionVector{1, 0, 1}));
  EXPECT_TRUE(j->decisions.at("cse#1").empty());
  std::string compact = DecisionsToCompact(*j);
  EXPECT_EQ(compact, "default;cse#1=;fusion#0=1,0,1");
  auto c = ParseDecisions(compact);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->decisions, j->decisions);
  auto back = ParseDecisions(DecisionsToJson(*c));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->decisions, j->decisions);
  EXPECT_EQ(back->pipeline, "default");
}

TEST(DecisionsIoTest, MalformedInputsSayWhat) {
  for (const char* bad : {"{\"decisions\": {\"fusion\": [1]}}", "{\"decisions\": {\"cse#0\": [1.5]}}",
                          "{not json", "default;cse#0=1,x", "default;cse#0", "{\"decisions\": [1]}"}) {
    auto d = ParseDecisions(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_TRUE(IsInvalidDecisions(d.status())) << bad;
  }
}

TEST(FeaturesTest, NodesEdgesAndSites) {
  auto m = Parse(kModule);
  ASSERT_NE(m, nullptr);
  auto point = NextDecisionPoint(*m, "only:cse", {});
  ASSERT_TRUE(point.ok() && point->has_value());
  GraphFeatures f = ExtractGraphFeatures(*m, (*point)->sites);
  EXPECT_EQ(f.node_count(), m->InstructionCount());
  int64_t edges = 0;
  for (const auto& c : m->computations()) {
    for (const auto& i : c->instructions()) edges += i->operand_count();
  }
  EXPECT_EQ(f.edge_count(), edges);
  EXPECT_EQ(f.node_features.size(), f.node_names.size() * f.node_columns.size());
  EXPECT_EQ(f.edge_features.size(), static_cast<size_t>(edges) * f.edge_columns.size());
  ASSERT_EQ(f.site_nodes.size(), 1u);
  ASSERT_GE(f.site_nodes[0], 0);
  EXPECT_EQ(f.node_names[f.site_nodes[0]], "main/x2");
  size_t is_site = 0;
  for (size_t c = 0; c < f.node_columns.size(); ++c) {
    if (f.node_columns[c] == "is_site") is_site = c;
  }
  EXPECT_EQ(f.node_features[f.site_nodes[0] * f.node_columns.size() + is_site], 1.0f);
  std::string json = GraphFeaturesToJson(f);
  EXPECT_NE(json.find("\"main/x2\""), std::string::npos);
}

TEST(PassOrderTest, RewardIsOpCountReduction) {
  auto m = Parse(kModule);
  ASSERT_NE(m, nullptr);
  std::vector<std::string> menu = PassOrderMenu();
  EXPECT_EQ(menu.back(), "stop");
  int dce = -1;
  for (size_t a = 0; a < menu.size(); ++a) {
    if (menu[a] == "dce") dce = static_cast<int>(a);
  }
  ASSERT_GE(dce, 0);
  PassOrderEnv env(*m);
  int64_t before = env.op_count();
  EXPECT_EQ(before, 6);  // add x2, multiply, call, subtract (+ negate in helper via call)
  auto step = env.Step(dce);
  ASSERT_TRUE(step.ok());
  EXPECT_EQ(step->reward, 1.0);  // the dead multiply
  EXPECT_FALSE(step->done);
  auto stop = env.Step(static_cast<int>(menu.size()) - 1);
  ASSERT_TRUE(stop.ok());
  EXPECT_TRUE(stop->done);
  EXPECT_EQ(stop->reward, 0.0);
  EXPECT_FALSE(env.Step(dce).ok());
  EXPECT_FALSE(PassOrderApply(*m, static_cast<int>(menu.size())).ok());
  EXPECT_FALSE(PassOrderApply(*m, -1).ok());
}

// Every pass whose default keeps some {keep, apply} sites has an ":all" variant (so the agent
// can apply what the default never does); codegen (parameter choices) and passes whose default
// applies every site have none; "stop" stays last and each item appears once.
TEST(PassOrderTest, MenuOffersAllVariantsOfPassesThatKeepByDefault) {
  const std::vector<std::string> menu = PassOrderMenu();
  auto has = [&](const std::string& item) { return std::count(menu.begin(), menu.end(), item) == 1; };
  EXPECT_EQ(menu.back(), "stop");
  size_t variants = 0;
  for (const PassInfo& info : PassInfos()) {
    if (info.label == "scratchpad-tiling") continue;
    EXPECT_TRUE(has(info.label)) << info.label;
    EXPECT_EQ(has(info.label + ":all"), info.all_variant) << info.label;
    variants += info.all_variant ? 1 : 0;
  }
  EXPECT_EQ(menu.size(), PassLabels().size() - 1 + variants + 1);  // less scratchpad-tiling, plus "stop"
  EXPECT_FALSE(has("scratchpad-tiling"));
  for (const char* item : {"fusion:all", "sibling-fusion:all", "fusion-merger:all", "simplify:all",
                           "logistic-expander:all", "batchnorm-expander:all", "transpose-folding:all",
                           "simplify-fp-conversions:all", "dot-merger:all", "custom-call-expander:all"}) {
    EXPECT_TRUE(has(item)) << item;
  }
  for (const char* item : {"codegen:all", "dce:all", "cse:all", "stop:all"}) EXPECT_FALSE(has(item)) << item;
  // The variant applies what the default keeps: logistic-expander expands only as ":all".
  auto m = Parse(R"(HloModule l
ENTRY main {
  x = f32[8] parameter(0)
  ROOT l = f32[8] logistic(x)
}
)");
  ASSERT_NE(m, nullptr);
  auto index = [&](const std::string& item) {
    return static_cast<int>(std::find(menu.begin(), menu.end(), item) - menu.begin());
  };
  auto plain = PassOrderApply(*m, index("logistic-expander"));
  auto all = PassOrderApply(*m, index("logistic-expander:all"));
  ASSERT_TRUE(plain.ok() && all.ok());
  EXPECT_EQ(PrintModule(*plain->module), PrintModule(*m));
  EXPECT_NE(PrintModule(*all->module).find("exponential"), std::string::npos);
  auto piped = RunPipeline(*m, PassSequencePipeline({"logistic-expander:all"}), {});
  ASSERT_TRUE(piped.ok()) << piped.status();
  EXPECT_EQ(PrintModule(**piped), PrintModule(*all->module));
}

TEST(PassOrderTest, SequencePipelineBuildsWhatTheActionsBuild) {
  auto m = Parse(kModule);
  ASSERT_NE(m, nullptr);
  const std::vector<std::string> menu = PassOrderMenu();
  // Every menu item once (the aggressive variants included), "stop" in the middle left out.
  std::vector<std::string> seq = {"inline", "cse", "stop", "fusion:all", "tuple-simplify", "dce",
                                  "sibling-fusion:all", "fusion-merger"};
  std::unique_ptr<Module> stepped = m->Clone();
  for (const std::string& item : seq) {
    int a = static_cast<int>(std::find(menu.begin(), menu.end(), item) - menu.begin());
    ASSERT_LT(a, static_cast<int>(menu.size())) << item;
    auto step = PassOrderApply(*stepped, a);
    ASSERT_TRUE(step.ok()) << step.status();
    stepped = std::move(step->module);
  }
  const std::string name = PassSequencePipeline(seq);
  EXPECT_EQ(name, "seq:inline,cse,fusion:all,tuple-simplify,dce,sibling-fusion:all,fusion-merger");
  auto piped = RunPipeline(*m, name, {});
  ASSERT_TRUE(piped.ok()) << piped.status();
  EXPECT_EQ(PrintModule(**piped), PrintModule(*stepped));
  EXPECT_NE(PrintModule(**piped), PrintModule(*m));
  // Invocation keys as for any pipeline; an empty sequence is "none"; bad items are named.
  PipelineReport report;
  ASSERT_TRUE(RunPipeline(*m, "seq:cse,dce,cse", {}, &report).ok());
  ASSERT_EQ(report.invocations.size(), 3u);
  EXPECT_EQ(report.invocations[2].key, "cse#1");
  EXPECT_EQ(PassSequencePipeline({"stop"}), "none");
  auto bad = GetPipeline("seq:cse,warp-drive");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("warp-drive"), std::string::npos);
  EXPECT_FALSE(GetPipeline("seq:").ok());
  EXPECT_FALSE(GetPipeline("seq:cse,,dce").ok());
}

// The "order" pipeline: one decision site per slot of the default pass sequence (each default
// pass preceded by a free slot, one free slot at the end). Its default vector builds exactly the
// default pipeline's module; skipping, replacing and inserting items build the matching
// sequence; vectors that do not fit are invalid decisions.
TEST(PassOrderTest, OrderPipelineSlotsAreThePassSequence) {
  auto m = Parse(kModule);
  ASSERT_NE(m, nullptr);
  auto def = RunPipeline(*m, "default", {});
  ASSERT_TRUE(def.ok()) << def.status();
  auto ordered = RunPipeline(*m, "order", {});
  ASSERT_TRUE(ordered.ok()) << ordered.status();
  EXPECT_EQ(PrintModule(**ordered), PrintModule(**def));

  auto seq = DefaultPassSequence(*m);
  ASSERT_TRUE(seq.ok()) << seq.status();
  ASSERT_GT(seq->size(), 3u);
  const auto inline_at = std::find(seq->begin(), seq->end(), "inline");
  ASSERT_NE(inline_at, seq->end());
  auto point = NextDecisionPoint(*m, "order", {});
  ASSERT_TRUE(point.ok() && point->has_value());
  const std::vector<DecisionSite>& sites = (*point)->sites;
  EXPECT_EQ((*point)->key, "pass-order#0");
  ASSERT_EQ(sites.size(), 2 * seq->size() + 1);
  for (size_t i = 0; i < sites.size(); ++i) {
    const DecisionSite& s = sites[i];
    EXPECT_EQ(s.choices[0], "skip");
    EXPECT_EQ(std::count(s.choices.begin(), s.choices.end(), "stop"), 0);
    EXPECT_EQ(s.choices[s.default_choice], i % 2 == 1 ? (*seq)[i / 2] : "skip") << i;
  }
  auto choice = [&](const std::string& item) {
    return static_cast<int>(std::find(sites[0].choices.begin(), sites[0].choices.end(), item) -
                            sites[0].choices.begin());
  };
  // Drop inline (its slot is 2k+1 for item k), insert fusion:all in the last free slot.
  DecisionVector v = DefaultDecisions(sites);
  v[2 * (inline_at - seq->begin()) + 1] = 0;
  v.back() = choice("fusion:all");
  std::vector<std::string> edited = *seq;
  edited.erase(edited.begin() + (inline_at - seq->begin()));
  edited.push_back("fusion:all");
  auto built = RunPipeline(*m, "order", {{"pass-order#0", v}});
  ASSERT_TRUE(built.ok()) << built.status();
  auto expected = RunPipeline(*m, PassSequencePipeline(edited), {});
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(PrintModule(**built), PrintModule(**expected));
  EXPECT_NE(PrintModule(**built), PrintModule(**def));  // the call stays: nothing inlined it

  v.pop_back();
  auto short_vector = RunPipeline(*m, "order", {{"pass-order#0", v}});
  EXPECT_TRUE(IsInvalidDecisions(short_vector.status())) << short_vector.status();
  v = DefaultDecisions(sites);
  v[0] = static_cast<int>(sites[0].choices.size());
  EXPECT_TRUE(IsInvalidDecisions(RunPipeline(*m, "order", {{"pass-order#0", v}}).status()));
}

TEST(DatasetTest, ExtractedModulesVerifyAndKeepTheirOps) {
  auto m = Parse(kModule);
  ASSERT_NE(m, nullptr);
  auto comps = ExtractCalledComputations(*m, 1);
  ASSERT_EQ(comps.size(), 1u);
  EXPECT_EQ(comps[0].module->entry()->root()->opcode(), Opcode::kNegate);
  EXPECT_EQ(comps[0].module->entry()->parameter_count(), 1);
  EXPECT_TRUE(VerifyModule(*comps[0].module).ok());
  auto subs = ExtractRandomSubgraphs(*m, 4, 11, 3);
  ASSERT_FALSE(subs.empty());
  for (const auto& s : subs) {
    EXPECT_TRUE(VerifyModule(*s.module).ok()) << s.name;
    int64_t inner = 0;
    for (const auto& i : s.module->entry()->instructions()) {
      if (i->opcode() != Opcode::kParameter && i->opcode() != Opcode::kConstant) ++inner;
    }
    // At most 3 chosen instructions plus the output tuple.
    EXPECT_GE(inner, 1);
    EXPECT_LE(inner, 4);
  }
  auto again = ExtractRandomSubgraphs(*m, 4, 11, 3);
  ASSERT_EQ(again.size(), subs.size());
  for (size_t k = 0; k < subs.size(); ++k) {
    EXPECT_EQ(PrintModule(*again[k].module), PrintModule(*subs[k].module));
  }
}

}  // namespace
}  // namespace hlox

namespace hlox {
namespace {

// `hlox passes` describes exactly the passes a pipeline step can name, each creatable.
TEST(PassInfos, DescribeEveryLabelOnce) {
  std::vector<std::string> described;
  for (const PassInfo& p : PassInfos()) {
    described.push_back(p.label);
    EXPECT_FALSE(p.description.empty()) << p.label;
    EXPECT_FALSE(p.site_kinds.empty()) << p.label;
    EXPECT_TRUE(CreatePassByLabel(p.label).ok()) << p.label;
  }
  EXPECT_EQ(described, PassLabels());
}

}  // namespace
}  // namespace hlox
