// Property test over corpus modules: for every pass and the default pipeline, three seeded
// random decision vectors give modules that verify, print deterministically, and compute the
// same outputs as the original on seeded inputs (dtype-aware tolerances). Samples the ten
// smallest corpus modules; HLOX_FULL=1 runs all of them.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"
#include "runtime/executor.h"
#include "tests/test_util.h"

namespace hlox {
namespace {

std::vector<std::string> SampledFiles() {
  std::vector<std::string> files = testing::CorpusFiles();
  const char* full = std::getenv("HLOX_FULL");
  if (full && std::string(full) == "1") return files;
  std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
    auto sa = std::filesystem::file_size(a), sb = std::filesystem::file_size(b);
    return sa != sb ? sa < sb : a < b;
  });
  if (files.size() > 10) files.resize(10);
  return files;
}

// Tolerances by element type: exact for integers and pred, loose for narrow floats.
std::pair<double, double> Tol(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF64: return {1e-9, 1e-9};
    case PrimitiveType::kF32:
    case PrimitiveType::kC64: return {1e-4, 1e-5};
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16: return {2e-2, 1e-2};
    default: return {IsFloatingPoint(t) ? 0.25 : 0.0, IsFloatingPoint(t) ? 0.25 : 0.0};
  }
}

// "" when equal within tolerance, else where they differ.
std::string CompareValues(const rt::Value& want, const rt::Value& got) {
  std::vector<rt::BufferPtr> a, b;
  want.Flatten(&a);
  got.Flatten(&b);
  if (a.size() != b.size()) return "different leaf counts";
  for (size_t leaf = 0; leaf < a.size(); ++leaf) {
    if (!a[leaf]->shape().Compatible(b[leaf]->shape())) return "leaf " + std::to_string(leaf) + " shape differs";
    Literal la = rt::LiteralFromValue(rt::Value::Array(a[leaf]), a[leaf]->shape());
    Literal lb = rt::LiteralFromValue(rt::Value::Array(b[leaf]), b[leaf]->shape());
    auto [rtol, atol] = Tol(la.shape().element_type());
    for (int64_t i = 0; i < la.element_count(); ++i) {
      double x = la.GetAsDouble(i), y = lb.GetAsDouble(i);
      if (std::isnan(x) && std::isnan(y)) continue;
      if (x == y) continue;
      if (std::fabs(x - y) <= atol + rtol * std::fabs(x)) continue;
      return "leaf " + std::to_string(leaf) + " element " + std::to_string(i) + ": want " + std::to_string(x) +
             " got " + std::to_string(y);
    }
  }
  return "";
}

absl::StatusOr<rt::Value> Execute(const Module& m, const std::vector<rt::Value>& inputs) {
  rt::ExecOptions options;
  options.threads = 1;
  options.seed = 7;
  auto exec = rt::Executor::Create(m, options);
  if (!exec.ok()) return exec.status();
  return (*exec)->Run(inputs);
}

DecisionVector RandomVector(const std::vector<DecisionSite>& sites, std::mt19937_64& rng) {
  DecisionVector d;
  for (const DecisionSite& s : sites) d.push_back(static_cast<int32_t>(rng() % s.choices.size()));
  return d;
}

class CorpusProperty : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusProperty, RandomDecisionsPreserveSemantics) {
  auto parsed = ParseModuleFile(GetParam());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const Module& original = **parsed;
  std::vector<rt::Value> inputs = rt::MakeSeededInputs(original, 1);
  absl::StatusOr<rt::Value> reference = Execute(original, inputs);
  std::string skipped_runtime;
  if (!reference.ok()) skipped_runtime = std::string(reference.status().message());

  std::vector<std::string> pipelines;
  for (const std::string& label : PassLabels()) pipelines.push_back("only:" + label);
  pipelines.push_back("default");
  for (const std::string& pipeline : pipelines) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      std::mt19937_64 rng(seed * 7919 + std::hash<std::string>{}(pipeline) % 1000);
      PipelineDecisions used;
      DecisionPolicy policy = [&](const std::string&, const Module&, const std::vector<DecisionSite>& sites) {
        return RandomVector(sites, rng);
      };
      auto out = RunPipelineWithPolicy(original, pipeline, policy, &used);
      ASSERT_TRUE(out.ok()) << pipeline << " seed " << seed << ": " << out.status();
      absl::Status v = VerifyModule(**out);
      ASSERT_TRUE(v.ok()) << pipeline << " seed " << seed << ": " << v;
      // Determinism: replaying the recorded decisions prints the same module.
      auto again = RunPipeline(original, pipeline, used);
      ASSERT_TRUE(again.ok()) << again.status();
      ASSERT_EQ(PrintModule(**out), PrintModule(**again)) << pipeline << " seed " << seed;
      if (!skipped_runtime.empty()) continue;
      absl::StatusOr<rt::Value> got = Execute(**out, inputs);
      ASSERT_TRUE(got.ok()) << pipeline << " seed " << seed << ": " << got.status();
      std::string diff = CompareValues(*reference, *got);
      EXPECT_EQ(diff, "") << pipeline << " seed " << seed;
    }
  }
  if (!skipped_runtime.empty()) GTEST_SKIP() << "verified only; runtime cannot run the original: " << skipped_runtime;
}

// XLA's CSE and DCE on the corpus's pass pairs: ours removes at least as many instructions
// from the "before" module as XLA's did, and the result computes the same outputs.
TEST(PassPairs, CseAndDceMatchXla) {
  HLOX_REQUIRE_CORPUS();
  int checked = 0;
  for (const std::string& before_path : testing::PassPairFiles()) {
    const std::string suffix = ".before.hlo";
    if (before_path.size() < suffix.size() ||
        before_path.compare(before_path.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    std::string stem = before_path.substr(0, before_path.size() - suffix.size());
    std::string label = stem.size() > 4 && stem.substr(stem.size() - 4) == "_cse" ? "cse"
                        : stem.size() > 4 && stem.substr(stem.size() - 4) == "_dce" ? "dce" : "";
    if (label.empty()) continue;
    auto before = ParseModuleFile(before_path);
    auto after = ParseModuleFile(stem + ".after.hlo");
    ASSERT_TRUE(before.ok() && after.ok()) << stem;
    auto ours = RunPipeline(**before, "only:" + label, {});
    ASSERT_TRUE(ours.ok()) << ours.status();
    ASSERT_TRUE(VerifyModule(**ours).ok()) << stem;
    EXPECT_LE((*ours)->InstructionCount(), (*after)->InstructionCount()) << stem;
    std::vector<rt::Value> inputs = rt::MakeSeededInputs(**before, 1);
    auto want = Execute(**before, inputs);
    if (want.ok()) {
      auto got = Execute(**ours, inputs);
      ASSERT_TRUE(got.ok()) << stem << ": " << got.status();
      EXPECT_EQ(CompareValues(*want, *got), "") << stem;
    }
    ++checked;
  }
  EXPECT_GE(checked, 3);
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = std::filesystem::path(info.param).stem().string();
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusProperty, ::testing::ValuesIn(SampledFiles()), TestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CorpusProperty);

}  // namespace
}  // namespace hlox
