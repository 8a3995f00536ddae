#include "tests/passes/xla_test_util.h"

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"
#include "tests/fusion/fusion_test_util.h"

namespace hlox::testing {

std::string RunChecked(const std::string& label, const std::string& text, const DecisionVector* decisions,
                       const PassCheck& check) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return "";
  const std::string only = "only:" + label;
  PipelineDecisions given;
  if (decisions != nullptr) {
    auto point = NextDecisionPoint(**m, only, {});
    EXPECT_TRUE(point.ok() && point->has_value());
    if (!point.ok() || !point->has_value()) return "";
    given[(*point)->key] = *decisions;
  }
  auto after = RunPipeline(**m, only, given);
  EXPECT_TRUE(after.ok()) << after.status();
  if (!after.ok()) return "";
  auto dce = RunPipeline(**after, "only:dce", {});
  EXPECT_TRUE(dce.ok());
  const Module& result = dce.ok() ? **dce : **after;
  EXPECT_TRUE(VerifyModule(result).ok()) << VerifyModule(result) << PrintModule(result);
  const std::string printed = PrintModule(result);
  auto reparsed = ParseModule(printed);
  EXPECT_TRUE(reparsed.ok()) << reparsed.status() << printed;
  EXPECT_EQ((*m)->entry()->root()->shape(), result.entry()->root()->shape()) << printed;
  for (uint64_t seed : check.seeds) {
    auto before_v = RunSeeded(**m, seed);
    auto after_v = RunSeeded(result, seed);
    EXPECT_TRUE(before_v.ok() && after_v.ok()) << before_v.status() << after_v.status() << printed;
    if (before_v.ok() && after_v.ok()) {
      EXPECT_EQ(CompareValues(*before_v, *after_v, check.scale), "") << printed;
    }
  }
  return printed;
}

PassOutcome ApplyAll(const std::string& label, const std::string& text, const PassCheck& check) {
  PassOutcome out;
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return out;
  auto point = NextDecisionPoint(**m, "only:" + label, {});
  EXPECT_TRUE(point.ok()) << point.status();
  if (!point.ok()) return out;
  if (!point->has_value()) {
    out.after = RunChecked(label, text, nullptr, check);
    return out;
  }
  DecisionVector all;
  for (const DecisionSite& s : (*point)->sites) {
    out.rules.push_back(s.rule);
    out.defaults.push_back(s.default_choice);
    all.push_back(1);
  }
  out.after = RunChecked(label, text, &all, check);
  return out;
}

std::string RunDefault(const std::string& label, const std::string& text, const PassCheck& check) {
  return RunChecked(label, text, nullptr, check);
}

size_t SiteCount(const std::string& label, const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return 0;
  auto point = NextDecisionPoint(**m, "only:" + label, {});
  EXPECT_TRUE(point.ok()) << point.status();
  return point.ok() && point->has_value() ? (*point)->sites.size() : 0;
}

bool Has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace hlox::testing
