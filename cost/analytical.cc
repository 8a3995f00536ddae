// Analytical cost assembly: op count, FLOPs, bytes moved and roofline time over the kernel view,
// plus scratchpad traffic and peak memory (rules in analytical.h).
#include "cost/analytical.h"

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "cost/fused_flops.h"
#include "cost/kernel_model.h"
#include "cost/peak_memory.h"
#include "cost/scratchpad.h"

namespace hlox {
namespace {

struct Totals {
  double flops = 0, bytes = 0, seconds = 0;
  void Add(const Totals& o, double times = 1) {
    flops += o.flops * times;
    bytes += o.bytes * times;
    seconds += o.seconds * times;
  }
};

struct Rates {
  double flops_per_s, bytes_per_s, kernel_overhead_s, fusion_overhead_s;
  OverheadRule overhead;
  KernelKindCosts kinds;
  FlopsOptions flops;
};

double ArrayElements(const Shape& s) {
  if (s.IsTuple()) {
    double n = 0;
    for (const Shape& e : s.tuple_shapes()) n += ArrayElements(e);
    return n;
  }
  return s.IsArray() ? static_cast<double>(s.ElementCount()) : 0;
}

// Seconds of one kernel under OverheadRule::kPerKind.
double PerKindSeconds(const Instruction& i, double flops, double bytes, const Rates& r) {
  const KernelKind kind = KernelKindOf(i);
  const KernelKindCost& c = r.kinds[static_cast<int>(kind)];
  double elements = ArrayElements(i.shape());
  if (kind == KernelKind::kDot) {
    elements = flops;
  } else if (kind == KernelKind::kReduce || kind == KernelKind::kFusionReduce) {
    for (const Instruction* op : i.operands()) elements = std::max(elements, ArrayElements(op->shape()));
  }
  const double compute = std::max(flops / r.flops_per_s, c.ns_per_element * 1e-9 * elements);
  double fixed = c.fixed_us * 1e-6;
  if (i.opcode() == Opcode::kFusion && i.to_apply() != nullptr) {
    fixed += c.node_us * 1e-6 * std::max(0, FusedNodeCount(*i.to_apply()) - 1);
  }
  return std::max(compute, bytes / r.bytes_per_s) + fixed;
}

Totals ComputationTotals(const Computation& c, const Rates& r) {
  Totals t;
  KernelModel m = BuildKernelModel(c);
  for (const Kernel& k : m.kernels) {
    const Instruction& i = *k.instr;
    if (i.opcode() == Opcode::kFusion && r.flops.fusion_rule == FusionFlopsRule::kRuntime &&
        i.to_apply() != nullptr && !FusedLoopSupported(*i.to_apply())) {
      t.Add(ComputationTotals(*i.to_apply(), r));  // the runtime runs its body unfused
      continue;
    }
    if (k.control_flow) {
      Totals inner;
      if (i.opcode() == Opcode::kWhile) {
        for (const Computation* b : i.called_computations()) {
          inner.Add(ComputationTotals(*b, r));
        }
        t.Add(inner, static_cast<double>(WhileTripCount(i)));
      } else if (i.opcode() == Opcode::kConditional) {
        for (const Computation* b : i.called_computations()) {
          Totals bt = ComputationTotals(*b, r);
          if (bt.seconds > inner.seconds) inner = bt;
        }
        t.Add(inner);
      } else {
        for (const Computation* b : i.called_computations()) {
          t.Add(ComputationTotals(*b, r));
        }
      }
      continue;
    }
    double f = InstructionFlops(i, r.flops);
    double b = k.ReadBytes() + k.WriteBytes();
    t.flops += f;
    t.bytes += b;
    if (r.overhead == OverheadRule::kPerKind) {
      t.seconds += PerKindSeconds(i, f, b, r);
      continue;
    }
    t.seconds += std::max(f / r.flops_per_s, b / r.bytes_per_s) + r.kernel_overhead_s;
    if (i.opcode() == Opcode::kFusion) t.seconds += r.fusion_overhead_s;
  }
  return t;
}


}  // namespace

int64_t AnalyticalOpCount(const Module& module) {
  if (module.entry() == nullptr) return 0;
  int64_t n = 0;
  std::unordered_set<const Computation*> seen;
  std::vector<const Computation*> stack{module.entry()};
  while (!stack.empty()) {
    const Computation* c = stack.back();
    stack.pop_back();
    if (!seen.insert(c).second) continue;
    for (const auto& i : c->instructions()) {
      Opcode op = i->opcode();
      if (op != Opcode::kParameter && op != Opcode::kConstant && op != Opcode::kTuple &&
          op != Opcode::kGetTupleElement) {
        ++n;
      }
      if (IsControlFlowOp(*i)) {
        for (const Computation* b : i->called_computations()) stack.push_back(b);
      }
    }
  }
  return n;
}

AnalyticalCost ComputeAnalyticalCost(const Module& module, const AnalyticalOptions& options) {
  AnalyticalCost a;
  a.scratchpad_bytes = options.scratchpad_bytes;
  if (module.entry() == nullptr) return a;
  const Computation& entry = *module.entry();
  Rates r;
  r.flops_per_s = std::max(1e-3, options.peaks.GflopsFor(options.threads)) * 1e9;
  r.bytes_per_s = std::max(1e-3, options.peaks.BandwidthGbsFor(options.threads)) * 1e9;
  r.kernel_overhead_s = std::max(0.0, options.peaks.kernel_overhead_us) * 1e-6;
  r.fusion_overhead_s = std::max(0.0, options.peaks.fusion_overhead_us) * 1e-6;
  r.overhead = options.overhead;
  r.kinds = options.peaks.kinds;
  r.flops.fusion_rule = options.fusion_flops;
  r.flops.threads = options.threads;
  Totals t = ComputationTotals(entry, r);
  a.op_count = AnalyticalOpCount(module);
  a.flops = t.flops;
  a.bytes_moved = t.bytes;
  a.roofline_seconds = t.seconds;
  a.scratchpad_traffic_bytes = ScratchpadTraffic(entry, options.scratchpad_bytes);
  a.peak_memory_bytes = AnalyticalPeakMemory(entry);
  return a;
}

}  // namespace hlox
