// Search spaces over a pipeline's decision points: one point as before, and joint spaces of
// several points ("fusion+codegen") whose later parts are re-listed per candidate, carrying
// choices over by site id and choice name.
#include "agent/search_space.h"

#include <algorithm>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/pipeline.h"
#include "runtime/gemm/dot_general.h"

namespace hlox {
namespace {

constexpr char kDense[] = R"(HloModule dense
ENTRY main {
  x = f32[64,128] parameter(0)
  w = f32[128,128] parameter(1)
  b = f32[128] parameter(2)
  d = f32[64,128] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[64,128] broadcast(b), dimensions={1}
  a = f32[64,128] add(d, bb)
  z = f32[] constant(0)
  zb = f32[64,128] broadcast(z), dimensions={}
  ROOT r = f32[64,128] maximum(a, zb)
}
)";

std::unique_ptr<Module> Dense() {
  auto m = ParseModule(kDense);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

int64_t IndexOf(const SearchSpace& s, const std::string& id) {
  for (int64_t i = 0; i < s.size(); ++i) {
    if (s.sites[i].id == id) return i;
  }
  return -1;
}

// The first site whose id starts with `prefix`, or -1.
int64_t IndexOfPrefix(const SearchSpace& s, const std::string& prefix) {
  for (int64_t i = 0; i < s.size(); ++i) {
    if (s.sites[i].id.rfind(prefix, 0) == 0) return i;
  }
  return -1;
}

TEST(SearchSpace, JointSpaceConcatenatesThePartsInPipelineOrder) {
  auto m = Dense();
  ASSERT_TRUE(m);
  auto fusion = BuildSearchSpace(*m, "default", "fusion");
  auto codegen = BuildSearchSpace(*m, "default", "codegen");
  auto joint = BuildSearchSpace(*m, "default", "fusion+codegen");
  ASSERT_TRUE(fusion.ok() && codegen.ok() && joint.ok()) << joint.status();
  EXPECT_FALSE(fusion->joint());
  ASSERT_TRUE(joint->joint());
  EXPECT_EQ(joint->key, "fusion#0+codegen#0");
  ASSERT_EQ(joint->parts.size(), 2u);
  EXPECT_EQ(joint->size(), fusion->size() + codegen->size());
  EXPECT_EQ(joint->parts[1].begin, fusion->size());
  EXPECT_EQ(joint->fixed, fusion->fixed);
  DecisionVector both = fusion->defaults;
  both.insert(both.end(), codegen->defaults.begin(), codegen->defaults.end());
  EXPECT_EQ(joint->defaults, both);
  // The dot's GEMM site (the default fuses the dot with its bias and activation into an output
  // fusion, whose site is named after the fusion).
  EXPECT_GE(IndexOfPrefix(*joint, "gemm:"), fusion->size());
  EXPECT_EQ(joint->features.site_nodes.size(), joint->sites.size());
  // The defaults evaluate to the default pipeline's module.
  auto def = RunPipeline(*m, "default", {});
  auto via = RunPipeline(*m, "default", joint->Decisions(joint->defaults));
  ASSERT_TRUE(def.ok() && via.ok()) << via.status();
  EXPECT_EQ(PrintModule(**def), PrintModule(**via));
}

TEST(SearchSpace, LaterPartsAreReListedPerCandidate) {
  auto m = Dense();
  ASSERT_TRUE(m);
  auto joint = BuildSearchSpace(*m, "default", "fusion+output-fusion+codegen");
  ASSERT_TRUE(joint.ok()) << joint.status();
  ASSERT_EQ(joint->parts.size(), 3u);
  // At the defaults the dot is in an output fusion: codegen lists only its GEMM site, named
  // after the fusion.
  const int64_t epilogue = IndexOf(*joint, "epilogue:d");
  const int64_t gemm = IndexOfPrefix(*joint, "gemm:");
  ASSERT_EQ(epilogue, joint->parts[1].begin);
  ASSERT_GE(gemm, joint->parts[2].begin);
  EXPECT_NE(joint->sites[gemm].id, "gemm:d");
  // Keep the dot out: codegen is re-listed for this candidate (the loop fusion to tune and the
  // dot's own GEMM site), so its vector is longer than the part at the defaults.
  DecisionVector v = joint->defaults;
  v[epilogue] = 0;
  PipelineDecisions d = joint->Decisions(v);
  ASSERT_TRUE(d.count("codegen#0"));
  EXPECT_GT(d["codegen#0"].size(), static_cast<size_t>(joint->parts[2].end - joint->parts[2].begin));
  auto out = RunPipeline(*m, "default", d);
  ASSERT_TRUE(out.ok()) << out.status();
  int dots = 0;
  for (const auto& i : (*out)->entry()->instructions()) dots += i->opcode() == Opcode::kDot;
  EXPECT_EQ(dots, 1);
  // A choice made on the defaults' sites reaches the module: t1 at the output fusion's GEMM site.
  const auto& choices = joint->sites[gemm].choices;
  v = joint->defaults;
  v[gemm] = static_cast<int32_t>(std::find(choices.begin(), choices.end(), "t1") - choices.begin());
  out = RunPipeline(*m, "default", joint->Decisions(v));
  ASSERT_TRUE(out.ok()) << out.status();
  const Instruction* root = (*out)->entry()->root();
  ASSERT_EQ(root->opcode(), Opcode::kFusion);
  EXPECT_EQ(root->attrs().fusion_kind, FusionKind::kOutput);
  EXPECT_EQ(rt::ParseGemmTuning(root->attrs().backend_config).threads, 1);
}

TEST(SearchSpace, UnknownPartIsNotFound) {
  auto m = Dense();
  ASSERT_TRUE(m);
  auto bad = BuildSearchSpace(*m, "default", "fusion+nonesuch");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(std::string(bad.status().message()).find("nonesuch"), std::string::npos);
  // Parts must follow pipeline order.
  EXPECT_FALSE(BuildSearchSpace(*m, "default", "codegen+fusion").ok());
}

}  // namespace
}  // namespace hlox
