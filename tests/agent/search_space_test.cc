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
  EXPECT_GE(IndexOf(*joint, "gemm:d"), fusion->size());
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
  auto joint = BuildSearchSpace(*m, "default", "fusion+codegen");
  ASSERT_TRUE(joint.ok()) << joint.status();
  // Fuse nothing, and run the dot on one thread: codegen now lists no fused loop to tune, so its
  // vector is shorter than at the defaults, and the dot's choice is carried over by id.
  DecisionVector v = joint->defaults;
  std::fill(v.begin(), v.begin() + joint->parts[1].begin, 0);
  const int64_t gemm = IndexOf(*joint, "gemm:d");
  ASSERT_GE(gemm, 0);
  const auto& choices = joint->sites[gemm].choices;
  v[gemm] = static_cast<int32_t>(std::find(choices.begin(), choices.end(), "t1") - choices.begin());
  PipelineDecisions d = joint->Decisions(v);
  ASSERT_TRUE(d.count("codegen#0"));
  EXPECT_LT(d["codegen#0"].size(), static_cast<size_t>(joint->parts[1].end - joint->parts[1].begin));
  auto out = RunPipeline(*m, "default", d);
  ASSERT_TRUE(out.ok()) << out.status();
  const Instruction* dot = nullptr;
  for (const auto& i : (*out)->entry()->instructions()) {
    if (i->opcode() == Opcode::kDot) dot = i.get();
  }
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(rt::ParseGemmTuning(dot->attrs().backend_config).threads, 1);
  EXPECT_EQ((*out)->entry()->root()->opcode(), Opcode::kMaximum);  // nothing fused
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
