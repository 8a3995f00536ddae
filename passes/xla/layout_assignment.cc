// layout-assignment (after XLA's LayoutAssignment): the dimension order each convolution reads
// and writes its operands in, and the order each dot writes its result in, as decisions.
//
// hlox values are logical arrays (only a bitcast reads a layout, docs/DECISIONS.md), so a physical
// layout is expressed the way XLA's layout normalization expresses it: as a logical dimension
// order, with every change of order an explicit transpose that the runtime executes. A choice
// rewrites
//   convolution(x, k), dim_labels=L
// into
//   transpose(convolution(transpose(x, p_in), transpose(k, p_k)), dim_labels=L'), p_out^-1)
// where the new labels put each operand's dimensions in the chosen order:
//   channels_last:  input and output [non-spatial, spatial..., non-spatial], kernel
//                   [spatial..., in, out] (a forward convolution becomes b01f_01io->b01f: the
//                   runtime's im2col and depthwise forms read these in place);
//   channels_first: input and output [non-spatial, non-spatial, spatial...], kernel
//                   [out, in, spatial...] (bf01_oi01->bf01: the plane forms).
// Input and output keep the order of their two non-spatial dimensions (batch and feature, or
// the other way round in a weight gradient), so every convolution over the same activations
// asks for the same order of them.
// The simplification fixpoint that follows in the default pipeline then removes what cancels:
// transpose(transpose(x)) pairs between consecutive convolutions, transposes that reshape-mover
// sinks through elementwise ops, and reduces of transposes (simplify's reduce_transpose), so a
// chain of convolutions that all take one choice keeps its activations in that order and pays
// transposes only where the chain ends. Every choice computes the same function (the
// convolution sums the same products; only the order of its inner loops changes).
//
// Sites: `conv_layout` at each convolution with at least one spatial dimension and static
// shapes, outside fusions; choices keep plus each form the convolution is not already in.
// Default keep: the runtime reads both forms without hidden copies, and which is faster
// depends on the shapes and on what the transposes cost around it (docs/DECISIONS.md).
//
// Sites: `dot_layout` at each dot with free dimensions on both sides; choices keep and
// `transposed_result`: dot(a, b) -> transpose(dot(b, a)), the result written with the rhs's
// free dimensions first (what a column-major result layout is in XLA). It pays when the dot's
// user transposes its result anyway (the two transposes cancel in the fixpoint) or when the
// swapped product suits the GEMM better (a narrow C computed as its wide transpose). Default
// (XLA's): transposed_result when every reader of the dot's result, through chains of
// transposes, reads it in the swapped order, so the transposes cancel; else keep. The pass runs
// before the simplifier, and PyTorch's exports transpose a weight gradient twice: without
// looking through the chain the rule swapped those dots and made the MLP training step
// 1.25-1.41x slower (docs/MEASUREMENTS.md). The condition is also a site feature.
#include <algorithm>

#include "common/status_macros.h"
#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/site_util.h"

namespace hlox {
namespace {

constexpr const char* kChannelsLast = "channels_last";
constexpr const char* kChannelsFirst = "channels_first";
constexpr const char* kTransposedResult = "transposed_result";

bool IsLayoutConv(const Instruction& i) {
  if (i.opcode() != Opcode::kConvolution || i.operand_count() != 2 || !i.attrs().conv.has_value()) return false;
  const ConvDimensionNumbers& dn = *i.attrs().conv;
  const int64_t s = static_cast<int64_t>(dn.input_spatial.size());
  if (s == 0 || !IsStaticArray(i.shape()) || !IsStaticArray(i.operand(0)->shape()) ||
      !IsStaticArray(i.operand(1)->shape())) {
    return false;
  }
  return i.shape().rank() == s + 2 && i.operand(0)->shape().rank() == s + 2 && i.operand(1)->shape().rank() == s + 2;
}

// The three dimension orders of a form: order[j] = the current dimension that goes to
// position j (what a transpose's `dimensions` list says).
struct Orders {
  std::vector<int64_t> input, kernel, output;
};

// Input and output keep their two non-spatial dimensions in the order they have (so a
// weight-gradient convolution, whose input "batch" is the activations' feature dimension,
// orders the activations as the forward convolution does and the transposes between them
// cancel); the spatial dimensions go between them (channels-last) or after them
// (channels-first). The kernel takes the runtime's order for the form by role.
std::vector<int64_t> ActivationOrder(int64_t a, int64_t b, const std::vector<int64_t>& spatial, bool channels_last) {
  std::vector<int64_t> order = {std::min(a, b)};
  if (!channels_last) order.push_back(std::max(a, b));
  order.insert(order.end(), spatial.begin(), spatial.end());
  if (channels_last) order.push_back(std::max(a, b));
  return order;
}

Orders FormOrders(const ConvDimensionNumbers& dn, bool channels_last) {
  Orders o;
  o.input = ActivationOrder(dn.input_batch, dn.input_feature, dn.input_spatial, channels_last);
  o.output = ActivationOrder(dn.output_batch, dn.output_feature, dn.output_spatial, channels_last);
  if (channels_last) {
    o.kernel = dn.kernel_spatial;
    o.kernel.push_back(dn.kernel_input_feature);
    o.kernel.push_back(dn.kernel_output_feature);
  } else {
    o.kernel = {dn.kernel_output_feature, dn.kernel_input_feature};
    o.kernel.insert(o.kernel.end(), dn.kernel_spatial.begin(), dn.kernel_spatial.end());
  }
  return o;
}

bool InForm(const ConvDimensionNumbers& dn, bool channels_last) {
  const Orders o = FormOrders(dn, channels_last);
  return simp::IsIdentityPermutation(o.input) && simp::IsIdentityPermutation(o.kernel) &&
         simp::IsIdentityPermutation(o.output);
}

// The labels once every operand is in its order: each role moves to its dimension's position.
ConvDimensionNumbers Relabelled(const ConvDimensionNumbers& dn, const Orders& o) {
  auto at = [](const std::vector<int64_t>& order, int64_t d) {
    return static_cast<int64_t>(std::find(order.begin(), order.end(), d) - order.begin());
  };
  ConvDimensionNumbers r = dn;
  r.input_batch = at(o.input, dn.input_batch);
  r.input_feature = at(o.input, dn.input_feature);
  r.kernel_input_feature = at(o.kernel, dn.kernel_input_feature);
  r.kernel_output_feature = at(o.kernel, dn.kernel_output_feature);
  r.output_batch = at(o.output, dn.output_batch);
  r.output_feature = at(o.output, dn.output_feature);
  for (size_t d = 0; d < dn.input_spatial.size(); ++d) {
    r.input_spatial[d] = at(o.input, dn.input_spatial[d]);
    r.kernel_spatial[d] = at(o.kernel, dn.kernel_spatial[d]);
    r.output_spatial[d] = at(o.output, dn.output_spatial[d]);
  }
  return r;
}

// `x` with its dimensions in `order` (x itself when the order is the identity).
Instruction* InOrder(const Instruction& anchor, Instruction* x, const std::vector<int64_t>& order) {
  return simp::IsIdentityPermutation(order) ? x : simp::AddTranspose(anchor, x, order);
}

// Rewrites `conv` into the form; returns the replacement (same shape as conv).
Instruction* ToForm(Instruction& conv, bool channels_last) {
  const ConvDimensionNumbers& dn = *conv.attrs().conv;
  const Orders o = FormOrders(dn, channels_last);
  Instruction* in = InOrder(conv, conv.operand(0), o.input);
  Instruction* k = InOrder(conv, conv.operand(1), o.kernel);
  const Shape& os = conv.shape();
  std::unique_ptr<Instruction> c =
      conv.CloneWithOperands(simp::ShapeLike(os, os.element_type(), simp::PermutedDims(os.dims(), o.output)), {in, k});
  c->set_name("");
  c->attrs().conv = Relabelled(dn, o);
  Instruction* nc = conv.parent()->AddInstruction(std::move(c));
  if (simp::IsIdentityPermutation(o.output) && simp::CanReplaceWith(conv, *nc)) return nc;
  Instruction* back = simp::AddNew(conv, Opcode::kTranspose, os, {nc});
  back->attrs().dimensions = simp::InversePermutation(o.output);
  return back;
}

// A dot whose result has free dimensions from both operands, so computing it with the operands'
// roles swapped gives its result in another order: [batch..., rhs free..., lhs free...].
bool IsLayoutDot(const Instruction& i) {
  if (i.opcode() != Opcode::kDot || i.operand_count() != 2 || !i.attrs().dot.has_value() ||
      !IsStaticArray(i.shape()) || !IsStaticArray(i.operand(0)->shape()) || !IsStaticArray(i.operand(1)->shape())) {
    return false;
  }
  const DotDimensionNumbers& dn = *i.attrs().dot;
  const int64_t batch = static_cast<int64_t>(dn.lhs_batch.size());
  const int64_t lhs_free = i.operand(0)->shape().rank() - batch - static_cast<int64_t>(dn.lhs_contracting.size());
  const int64_t rhs_free = i.operand(1)->shape().rank() - batch - static_cast<int64_t>(dn.rhs_contracting.size());
  return lhs_free > 0 && rhs_free > 0 && i.shape().rank() == batch + lhs_free + rhs_free;
}

// order[j]: the dimension of `dot`'s result at position j of the result of dot(b, a):
// [batch..., rhs free..., lhs free...].
std::vector<int64_t> SwappedOrder(const Instruction& dot) {
  const DotDimensionNumbers& dn = *dot.attrs().dot;
  const int64_t nb = static_cast<int64_t>(dn.lhs_batch.size());
  const int64_t fm = dot.operand(0)->shape().rank() - nb - static_cast<int64_t>(dn.lhs_contracting.size());
  const int64_t fn = dot.shape().rank() - nb - fm;
  std::vector<int64_t> order;
  for (int64_t d = 0; d < nb; ++d) order.push_back(d);
  for (int64_t d = 0; d < fn; ++d) order.push_back(nb + fm + d);
  for (int64_t d = 0; d < fm; ++d) order.push_back(nb + d);
  return order;
}

// True when every value read from `v` (whose dimension j is the dot result's dimension
// composed[j]) reaches its readers in `order`: each user is a transpose, and through chains of
// transposes (composed as they go) every reader that is not a transpose sees `order`.
bool ReadInOrder(const Instruction& v, const std::vector<int64_t>& composed, const std::vector<int64_t>& order) {
  if (v.users().empty() || v.parent()->root() == &v) return false;
  for (const Instruction* u : v.users()) {
    if (u->opcode() != Opcode::kTranspose) {
      if (composed != order) return false;
      continue;
    }
    std::vector<int64_t> next(composed.size());
    for (size_t j = 0; j < next.size(); ++j) next[j] = composed[u->dimensions()[j]];
    if (!ReadInOrder(*u, next, order)) return false;
  }
  return true;
}

// True when every user of the dot transposes its result into the swapped order (looking
// through chains of transposes, which the simplifier composes): computing dot(b, a) then makes
// those transposes identities (XLA's layout assignment would give the dot the layout that makes
// them bitcasts).
bool UsersWantSwapped(const Instruction& dot) {
  std::vector<int64_t> identity(dot.shape().rank());
  for (size_t j = 0; j < identity.size(); ++j) identity[j] = static_cast<int64_t>(j);
  const std::vector<int64_t> order = SwappedOrder(dot);
  return order != identity && ReadInOrder(dot, identity, order);
}

// dot(a, b) -> transpose(dot(b, a)): the dot writes its result with the rhs's free dimensions
// before the lhs's (a column-major matrix product), and a transpose puts them back.
Instruction* TransposedDot(Instruction& dot) {
  const DotDimensionNumbers& dn = *dot.attrs().dot;
  DotDimensionNumbers swapped;
  swapped.lhs_batch = dn.rhs_batch;
  swapped.rhs_batch = dn.lhs_batch;
  swapped.lhs_contracting = dn.rhs_contracting;
  swapped.rhs_contracting = dn.lhs_contracting;
  const std::vector<int64_t> order = SwappedOrder(dot);
  const Shape& os = dot.shape();
  const Shape swapped_shape = simp::ShapeLike(os, os.element_type(), simp::PermutedDims(os.dims(), order));
  std::unique_ptr<Instruction> c = dot.CloneWithOperands(swapped_shape, {dot.operand(1), dot.operand(0)});
  c->set_name("");
  c->attrs().dot = swapped;
  Instruction* nd = dot.parent()->AddInstruction(std::move(c));
  Instruction* back = simp::AddNew(dot, Opcode::kTranspose, os, {nd});
  back->attrs().dimensions = simp::InversePermutation(order);
  return back;
}

class LayoutAssignment : public Pass {
 public:
  std::string_view name() const override { return "layout-assignment"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    for (Computation* comp : module.PostOrderComputations()) {
      if (comp->is_fusion_computation()) continue;
      const std::unordered_set<const Instruction*> ordered = ControlDepInstructions(*comp);
      for (const Instruction* i : comp->PostOrder()) {
        if (ordered.count(i)) continue;
        if (IsLayoutDot(*i)) {
          DecisionSite site =
              MakeSite("dot_layout", *i, {}, {"keep", kTransposedResult}, UsersWantSwapped(*i) ? 1 : 0);
          const DotDimensionNumbers& dn = *i->attrs().dot;
          // The matrix product's sizes: batch, rows (lhs free), columns (rhs free), reduction.
          int64_t batch = 1, k = 1;
          for (int64_t d : dn.lhs_batch) batch *= i->operand(0)->shape().dim(d);
          for (int64_t d : dn.lhs_contracting) k *= i->operand(0)->shape().dim(d);
          const int64_t m = i->operand(0)->shape().ElementCount() / std::max<int64_t>(1, batch * k);
          const int64_t n = i->shape().ElementCount() / std::max<int64_t>(1, batch * m);
          for (int64_t v : {batch, m, n, k}) site.features.push_back(static_cast<float>(v));
          site.features.push_back(UsersWantSwapped(*i) ? 1.0f : 0.0f);
          sites.push_back(std::move(site));
          continue;
        }
        if (!IsLayoutConv(*i)) continue;
        std::vector<std::string> choices = {"keep"};
        if (!InForm(*i->attrs().conv, true)) choices.push_back(kChannelsLast);
        if (!InForm(*i->attrs().conv, false)) choices.push_back(kChannelsFirst);
        DecisionSite site = MakeSite("conv_layout", *i, {}, std::move(choices), 0);
        // Which form it is in now (1 channels-last, 2 channels-first, 0 neither), and the
        // sizes that decide which form is faster: output elements, input features, output
        // features, window elements.
        const ConvDimensionNumbers& dn = *i->attrs().conv;
        site.features.push_back(InForm(dn, true) ? 1.0f : InForm(dn, false) ? 2.0f : 0.0f);
        site.features.push_back(static_cast<float>(i->operand(0)->shape().dim(dn.input_feature)));
        site.features.push_back(static_cast<float>(i->shape().dim(dn.output_feature)));
        int64_t window = 1;
        for (int64_t d : dn.kernel_spatial) window *= i->operand(1)->shape().dim(d);
        site.features.push_back(static_cast<float>(window));
        sites.push_back(std::move(site));
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    auto apply = [](const DecisionSite& site, int choice, const std::vector<Instruction*>& instrs,
                    InstructionIndex& index) -> absl::StatusOr<SiteOutcome> {
      Instruction* op = instrs[0];
      if (HasControlDeps(*op)) return SiteOutcome::kStale;
      Instruction* replacement = nullptr;
      if (site.rule == "dot_layout") {
        if (!IsLayoutDot(*op)) return SiteOutcome::kStale;
        replacement = TransposedDot(*op);
      } else {
        if (!IsLayoutConv(*op)) return SiteOutcome::kStale;
        const bool channels_last = site.choices[choice] == kChannelsLast;
        if (InForm(*op->attrs().conv, channels_last)) return SiteOutcome::kStale;
        replacement = ToForm(*op, channels_last);
      }
      HLOX_RETURN_IF_ERROR(ReplaceAnchor(op, replacement, &index));
      return SiteOutcome::kApplied;
    };
    return ApplySitesInOrder(module, sites, decisions, apply);
  }
};

}  // namespace

std::unique_ptr<Pass> CreateLayoutAssignment() { return std::make_unique<LayoutAssignment>(); }

}  // namespace hlox
