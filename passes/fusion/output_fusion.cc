// OutputFusion: fuses a dot or a convolution into the elementwise consumer of its result (bias,
// batch norm, activation, residual add, scale, a weight update), one site per dot or
// convolution ("epilogue:<op>", rules dot_epilogue and conv_epilogue), choices {keep, fuse}.
// The consumer (a kLoop fusion, or an elementwise instruction wrapped into one) takes the op
// into its body and becomes a kOutput fusion, which the runtime runs as the GEMM or
// convolution with the consumer's work applied to each tile of the result as it is finished
// (runtime/kernels/output_fusion.h): the result is never written out and read back, and one
// kernel dispatch and one buffer go away.
//
// A site needs: an op whose only user is that consumer, the consumer of the op's dims and
// element type, and the op's result reaching the consumer's root through elementwise ops only
// (each output element reads the op's element at its own index). Runs after the other fusion
// passes (which never fuse a dot or convolution); sites in computation post order, never
// overlapping.
#include "absl/strings/str_cat.h"
#include "passes/fusion/fusion_util.h"
#include "passes/passes.h"
#include "passes/site_util.h"
#include "runtime/core/executor_donation.h"

namespace hlox {
namespace {

// The consumer a dot or convolution can be fused into, or null.
const Instruction* EpilogueConsumer(const Instruction& dot) {
  if ((dot.opcode() != Opcode::kDot && dot.opcode() != Opcode::kConvolution) || dot.operand_count() != 2 ||
      !dot.shape().IsArray()) {
    return nullptr;
  }
  if (dot.IsRoot() || dot.user_count() != 1 || HasControlDeps(dot)) return nullptr;
  const Instruction* u = dot.users()[0];
  if (u->parent() != dot.parent() || !fusion::IsFusibleConsumer(*u) || !u->shape().IsArray()) return nullptr;
  if (u->shape().element_type() != dot.shape().element_type() || u->shape().dims() != dot.shape().dims()) {
    return nullptr;
  }
  if (u->opcode() != Opcode::kFusion) return u->IsElementwise() ? u : nullptr;
  if (u->attrs().fusion_kind != FusionKind::kLoop) return nullptr;
  const Computation* body = u->called_computations()[0];
  if (body->root() == nullptr || !body->root()->shape().IsArray()) return nullptr;
  for (int64_t k = 0; k < u->operand_count(); ++k) {
    if (u->operand(k) != &dot) continue;
    if (k >= body->parameter_count() || !rt::ElementwiseToRoot(body->parameter(k), body->root()->shape())) {
      return nullptr;
    }
  }
  return u;
}

// Result elements and bytes, operand elements, and the consumer's fused instructions.
std::vector<float> Features(const Instruction& dot, const Instruction& consumer) {
  return {static_cast<float>(dot.shape().ElementCount()), static_cast<float>(dot.shape().ByteSize()),
          static_cast<float>(dot.operand(0)->shape().ElementCount()),
          static_cast<float>(dot.operand(1)->shape().ElementCount()),
          static_cast<float>(consumer.opcode() == Opcode::kFusion ? fusion::FusedInstructionCount(consumer) : 1)};
}

class OutputFusionPass : public Pass {
 public:
  std::string_view name() const override { return "output-fusion"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    for (Computation* comp : fusion::FusibleComputations(module)) {
      for (const Instruction* dot : comp->PostOrder()) {
        const Instruction* u = EpilogueConsumer(*dot);
        if (u == nullptr) continue;
        DecisionSite s;
        s.id = absl::StrCat("epilogue:", dot->name());
        s.rule = dot->opcode() == Opcode::kDot ? "dot_epilogue" : "conv_epilogue";
        s.instructions = {dot->name(), u->name()};
        s.computation = comp->name();
        s.choices = {"keep", "fuse"};
        s.default_choice = 1;
        s.features = Features(*dot, *u);
        sites.push_back(std::move(s));
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    auto rewrite = [](const DecisionSite& site, fusion::NameIndex& by_name) -> fusion::RewriteResult {
      auto it = by_name.find(site.instructions.empty() ? "" : site.instructions[0]);
      if (it == by_name.end() || EpilogueConsumer(*it->second) == nullptr) return std::nullopt;
      Instruction* dot = it->second;
      Computation* comp = dot->parent();
      Instruction* consumer = fusion::ConsumerFusion(dot->users()[0], by_name);
      fusion::FuseInto(consumer, dot);
      consumer->attrs().fusion_kind = FusionKind::kOutput;
      by_name.erase(dot->name());
      std::string dname = dot->name();
      comp->RemoveInstruction(dot);
      return std::make_pair(absl::StrCat("fused ", dname, " into ", consumer->name()), comp);
    };
    return fusion::ApplyChosenSites(module, sites, decisions, rewrite);
  }
};

}  // namespace

std::unique_ptr<Pass> CreateOutputFusion() { return std::make_unique<OutputFusionPass>(); }

}  // namespace hlox
