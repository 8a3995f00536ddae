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
  double ns_per_element = c.ns_per_element, node_us = 0, node_ns = 0, move_us = 0;
  int extra_nodes = 0;
  if (i.opcode() == Opcode::kFusion && i.to_apply() != nullptr) {
    // The fused ops' mix of element classes weights the per-class figures.
    const FusedOpMix mix = FusedOpMixOf(*i.to_apply());
    const double n = std::max(1, mix.Total());
    const double f = mix.Total() > 0 ? mix.count[0] / n : 1, in = mix.count[1] / n, h = mix.count[2] / n;
    ns_per_element = f * c.ns_per_element + in * c.int_ns_per_element + h * c.half_ns_per_element;
    node_us = f * c.node_us + in * c.int_node_us + h * c.half_node_us;
    node_ns = f * c.node_ns_per_element + in * c.int_node_ns_per_element + h * c.half_node_ns_per_element;
    extra_nodes = std::max(0, FusedNodeCount(*i.to_apply()) - 1);
    move_us = c.move_node_us * mix.moves;
  }
  const double compute =
      std::max(flops / r.flops_per_s, (ns_per_element + node_ns * extra_nodes) * 1e-9 * elements);
  const double fixed = (c.fixed_us + node_us * extra_nodes + move_us) * 1e-6;
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

AnalyticalCost ComputeAnalyticalCost(const Module& module, const AnalyticalOptions& options) {
  AnalyticalCost a;
  a.scratchpad_bytes = options.scratchpad.scratchpad_bytes;
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
  a.op_count = OpCount(module);
  a.flops = t.flops;
  a.bytes_moved = t.bytes;
  a.roofline_seconds = t.seconds;
  const TrafficReport sp = ScratchpadTraffic(entry, options.scratchpad);
  a.scratchpad_traffic_bytes = sp.Total();
  a.scratchpad_seconds = sp.seconds;
  a.peak_memory_bytes = AnalyticalPeakMemory(entry);
  return a;
}

}  // namespace hlox
