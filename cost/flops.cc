// FLOP counts per instruction and trip counts of while loops (see analytical.h for the rules;
// fusions by the runtime's fused-loop rules in fused_flops.cc, or the old demand rule kept as a
// comparison baseline).
#include <algorithm>
#include <cmath>
#include <regex>
#include <string>
#include <unordered_map>

#include "cost/analytical.h"
#include "cost/fused_flops.h"

namespace hlox {
namespace {

bool IsTranscendental(Opcode op) {
  switch (op) {
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kTanh:
    case Opcode::kSin:
    case Opcode::kCos:
    case Opcode::kTan:
    case Opcode::kErf:
    case Opcode::kAtan2:
    case Opcode::kPower:
    case Opcode::kRsqrt:
    case Opcode::kSqrt:
    case Opcode::kCbrt:
    case Opcode::kAcos:
    case Opcode::kAtan:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtanh:
    case Opcode::kCosh:
    case Opcode::kSinh: return true;
    default: return false;
  }
}

double Elements(const Shape& s) {
  if (s.IsTuple()) {
    double n = 0;
    for (const Shape& e : s.tuple_shapes()) n += Elements(e);
    return n;
  }
  return static_cast<double>(s.ElementCount());
}

// FLOPs of one application of a scalar computation (a reducer or comparator): its non-alias
// instructions, at least 1.
double ApplyFlops(const Computation* c) {
  if (c == nullptr) return 1;
  double f = 0;
  for (const auto& i : c->instructions()) {
    if (i->opcode() == Opcode::kParameter || i->opcode() == Opcode::kConstant ||
        i->opcode() == Opcode::kTuple || i->opcode() == Opcode::kGetTupleElement) {
      continue;
    }
    f += IsTranscendental(i->opcode()) ? kTranscendentalFlops : 1;
  }
  return std::max(f, 1.0);
}

double ComputationFlops(const Computation* c, const FlopsOptions& o) {
  if (c == nullptr) return 0;
  double f = 0;
  for (const auto& i : c->instructions()) f += InstructionFlops(*i, o);
  return f;
}

// FusionFlopsRule::kDemand (the comparison baseline, analytical.h): demand flows from the root
// (its elements) to operands in reverse post order, summed over users; each instruction costs
// its per-element FLOPs times its demand. A computed operand demanded more than 16x its size is
// capped at its size when it is small (at most kHoistElements).
constexpr double kHoistElements = 16384;

double DemandFusionFlops(const Computation* c) {
  if (c == nullptr || c->root() == nullptr) return 0;
  std::unordered_map<const Instruction*, double> demand;
  const Instruction* root = c->root();
  if (root->opcode() == Opcode::kTuple) {
    for (const Instruction* op : root->operands()) demand[op] += Elements(op->shape());
  } else {
    demand[root] = Elements(root->shape());
  }
  const std::vector<Instruction*> order = c->PostOrder();
  double flops = 0;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Instruction& i = **it;
    auto found = demand.find(&i);
    if (found == demand.end() || i.opcode() == Opcode::kTuple) continue;
    const double own = std::max(Elements(i.shape()), 1.0);
    double d = found->second;
    const bool leaf = i.opcode() == Opcode::kParameter || i.opcode() == Opcode::kConstant;
    if (!leaf && d > 16 * own && own <= kHoistElements) d = own;
    flops += InstructionFlops(i) / own * d;
    const double per_element = d / own;  // evaluations per element of this instruction
    for (int64_t k = 0; k < i.operand_count(); ++k) {
      const Instruction* op = i.operand(k);
      double op_elems = Elements(op->shape());
      switch (i.opcode()) {
        case Opcode::kBroadcast:
        case Opcode::kSlice:
        case Opcode::kDynamicSlice:
        case Opcode::kGather:
          // One operand element per demanded output element.
          demand[op] += k == 0 ? d : std::min(d, op_elems * per_element);
          break;
        default:
          // Reduce, reshape, transpose, elementwise, concatenate, pad, dot...: every operand
          // element once per evaluation of the whole instruction.
          demand[op] += op_elems * per_element;
          break;
      }
    }
  }
  return flops;
}

double DotFlops(const Instruction& i) {
  if (!i.attrs().dot || i.operand_count() < 2) return 0;
  double contract = 1;
  const Shape& lhs = i.operand(0)->shape();
  for (int64_t d : i.attrs().dot->lhs_contracting) {
    if (d >= 0 && d < lhs.rank()) contract *= static_cast<double>(lhs.dim(d));
  }
  return 2.0 * Elements(i.shape()) * contract;
}

// A ragged dot does one dot's work over the rows in groups: at most the rows of the result,
// each contracted fully, except in contracting mode, where the g results share one contraction.
double RaggedDotFlops(const Instruction& i) {
  const double flops = DotFlops(i);
  const bool contracting_mode = i.attrs().dot && i.attrs().lhs_ragged_dims.size() == 1 &&
                                std::find(i.attrs().dot->lhs_contracting.begin(), i.attrs().dot->lhs_contracting.end(),
                                          i.attrs().lhs_ragged_dims[0]) != i.attrs().dot->lhs_contracting.end();
  if (!contracting_mode || i.shape().rank() < 1 || i.shape().dim(0) == 0) return flops;
  return flops / static_cast<double>(i.shape().dim(0));
}

// Number of (output position, kernel tap) pairs along one spatial dimension whose input
// position is real data (not padding, not a base-dilation hole).
double ValidTaps(int64_t in, int64_t out, const WindowDimension& w) {
  const int64_t dilated_in = in == 0 ? 0 : (in - 1) * w.base_dilation + 1;
  double n = 0;
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t k = 0; k < w.size; ++k) {
      int64_t p = o * w.stride + k * w.window_dilation - w.pad_low;
      if (p >= 0 && p < dilated_in && p % w.base_dilation == 0) n += 1;
    }
  }
  return n;
}

double ConvFlops(const Instruction& i) {
  const auto& dn = i.attrs().conv;
  if (!dn || i.operand_count() < 2) return 0;
  const Shape& in = i.operand(0)->shape();
  const Shape& ker = i.operand(1)->shape();
  const Shape& out = i.shape();
  double f = 2.0 * static_cast<double>(out.dim(dn->output_batch)) *
             static_cast<double>(out.dim(dn->output_feature)) *
             static_cast<double>(ker.dim(dn->kernel_input_feature));
  for (size_t s = 0; s < dn->input_spatial.size(); ++s) {
    WindowDimension w;
    w.size = ker.dim(dn->kernel_spatial[s]);
    if (i.attrs().window && s < i.attrs().window->dims.size()) w = i.attrs().window->dims[s];
    f *= ValidTaps(in.dim(dn->input_spatial[s]), out.dim(dn->output_spatial[s]), w);
  }
  return f;
}

}  // namespace

int64_t WhileTripCount(const Instruction& while_instr) {
  const std::string& cfg = while_instr.attrs().backend_config;
  static const std::regex re("\"known_trip_count\"\\s*:\\s*\\{\\s*\"n\"\\s*:\\s*\"?(\\d+)");
  std::smatch m;
  if (std::regex_search(cfg, m, re)) {
    try {
      return std::max<int64_t>(1, std::stoll(m[1].str()));
    } catch (...) {
      return 1;
    }
  }
  return 1;
}

double InstructionFlops(const Instruction& i, const FlopsOptions& o) {
  const Opcode op = i.opcode();
  if (IsTranscendental(op)) return kTranscendentalFlops * Elements(i.shape());
  switch (op) {
    case Opcode::kDot: return DotFlops(i);
    case Opcode::kScaledDot: return DotFlops(i);
    case Opcode::kRaggedDot: return RaggedDotFlops(i);
    case Opcode::kConvolution: return ConvFlops(i);
    case Opcode::kFusion:
      if (i.to_apply() == nullptr) return 0;
      return o.fusion_rule == FusionFlopsRule::kDemand ? DemandFusionFlops(i.to_apply())
                                                       : FusedLoopFlops(*i.to_apply(), o.threads);
    case Opcode::kCall: return ComputationFlops(i.to_apply(), o);
    case Opcode::kWhile: {
      const auto& c = i.called_computations();
      double per_trip = 0;
      for (const Computation* comp : c) per_trip += ComputationFlops(comp, o);
      return per_trip * static_cast<double>(WhileTripCount(i));
    }
    case Opcode::kConditional: {
      double best = 0;
      for (const Computation* comp : i.called_computations()) {
        best = std::max(best, ComputationFlops(comp, o));
      }
      return best;
    }
    case Opcode::kReduce: {
      // Variadic reduce: n inputs then n inits; one reducer application per input element.
      if (i.operand_count() == 0) return 0;
      return Elements(i.operand(0)->shape()) * ApplyFlops(i.to_apply());
    }
    case Opcode::kReduceWindow: {
      double window = 1;
      if (i.attrs().window) {
        for (const auto& w : i.attrs().window->dims) window *= static_cast<double>(w.size);
      }
      const Shape& s = i.shape().IsTuple() ? i.shape().tuple_shape(0) : i.shape();
      return static_cast<double>(s.ElementCount()) * window * ApplyFlops(i.to_apply());
    }
    case Opcode::kSelectAndScatter: {
      double window = 1;
      if (i.attrs().window) {
        for (const auto& w : i.attrs().window->dims) window *= static_cast<double>(w.size);
      }
      double src = i.operand_count() > 1 ? Elements(i.operand(1)->shape()) : 0;
      return src * window + src;
    }
    case Opcode::kSort: {
      double n = i.operand_count() > 0 ? Elements(i.operand(0)->shape()) : 0;
      return n * std::log2(std::max(n, 2.0)) * ApplyFlops(i.to_apply());
    }
    case Opcode::kMap: return Elements(i.shape()) * ApplyFlops(i.to_apply());
    case Opcode::kReduceScatter:
    case Opcode::kAllReduce: return Elements(i.shape());
    case Opcode::kBatchNormInference: return 4 * Elements(i.shape());
    case Opcode::kBatchNormTraining: return 7 * Elements(i.operand(0)->shape());
    case Opcode::kBatchNormGrad: return 10 * Elements(i.operand(0)->shape());
    case Opcode::kCholesky: {
      const Shape& s = i.shape();
      double n = s.rank() >= 1 ? static_cast<double>(s.dim(s.rank() - 1)) : 0;
      return Elements(s) / std::max(n * n, 1.0) * n * n * n / 3.0;
    }
    case Opcode::kTriangularSolve: {
      const Shape& a = i.operand(0)->shape();
      double n = a.rank() >= 1 ? static_cast<double>(a.dim(a.rank() - 1)) : 0;
      return Elements(i.shape()) * n;
    }
    case Opcode::kRng:
    case Opcode::kRngBitGenerator: return 4 * Elements(i.shape());
    case Opcode::kConvert:
    case Opcode::kCopy:
    case Opcode::kReal:
    case Opcode::kImag: return 0;  // data movement
    default: break;
  }
  if (IsElementwise(op)) return Elements(i.shape());
  return 0;  // data movement, aliases, custom calls with unknown cost
}

}  // namespace hlox
