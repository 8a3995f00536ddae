// Kernel-kind calibration (cmd_calibrate_kernels.h): generates, per kernel kind and size, a
// module of independent kernels of that kind, times it in this runtime (best of many runs, so a
// loaded machine still gives sane figures) and fits fixed + per-element costs.
#include "tools/cmd_calibrate_kernels.h"

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cost/timing.h"
#include "ir/parser.h"
#include "runtime/core/executor.h"

namespace hlox::cli {
namespace {

constexpr int kFew = 4, kMany = 36;  // kernels per module; the cost is the difference / 32
constexpr int kNodes = 9;            // fused adds of the per-node measurement (against 1)
constexpr int64_t kNodeSizes[2] = {16, 1024};  // elements of the per-node measurements

bool IsFusionKind(KernelKind k) {
  return k == KernelKind::kFusionRegister || k == KernelKind::kFusionBlock || k == KernelKind::kFusionReduce;
}

// HLO text of `count` independent kernels of `kind` whose size parameter is `n` (output
// elements; the matrix side for kDot); *elements gets the fit's x (FLOPs for kDot).
// Fusion kinds take the fused ops' element type `t` (f32, u32, bf16).
std::string KindModule(KernelKind kind, int count, int64_t n, double* elements, int nodes = 1,
                       const std::string& t = "f32") {
  const int64_t r = n / 16;
  std::string comps = absl::StrCat("add {\n  x = ", t, "[] parameter(0)\n  y = ", t,
                                   "[] parameter(1)\n  ROOT s = ", t, "[] add(x, y)\n}\n");
  std::string params, inst;
  *elements = static_cast<double>(n);
  auto vec = [](int64_t e) { return absl::StrCat("f32[", e, "]"); };
  auto mat = [](int64_t a, int64_t b) { return absl::StrCat("f32[", a, ",", b, "]"); };
  switch (kind) {
    case KernelKind::kElementwise:
      params = absl::StrCat("  p = ", vec(n), " parameter(0)\n  q = ", vec(n), " parameter(1)\n");
      inst = absl::StrCat(vec(n), " add(p, q)");
      break;
    case KernelKind::kTranscendental:
      params = absl::StrCat("  p = ", vec(n), " parameter(0)\n");
      inst = absl::StrCat(vec(n), " exponential(p)");
      break;
    case KernelKind::kBroadcast:
      params = "  p = f32[16] parameter(0)\n";
      inst = absl::StrCat(mat(r, 16), " broadcast(p), dimensions={1}");
      break;
    case KernelKind::kCopy:
      params = absl::StrCat("  p = ", mat(r, 16), " parameter(0)\n");
      inst = absl::StrCat(mat(16, r), " transpose(p), dimensions={1,0}");
      break;
    case KernelKind::kReduce:
      params = absl::StrCat("  p = ", mat(r, 16), " parameter(0)\n  z = f32[] constant(0)\n");
      inst = absl::StrCat(vec(r), " reduce(p, z), dimensions={1}, to_apply=add");
      break;
    case KernelKind::kSliceConcat:
      params = absl::StrCat("  p = ", vec(2 * n), " parameter(0)\n");
      inst = absl::StrCat(vec(n), " slice(p), slice={[", n / 2, ":", n / 2 + n, "]}");
      break;
    case KernelKind::kDynamicSlice:
      params = absl::StrCat("  p = ", vec(2 * n), " parameter(0)\n  i = s32[] parameter(1)\n");
      inst = absl::StrCat(vec(n), " dynamic-slice(p, i), dynamic_slice_sizes={", n, "}");
      break;
    case KernelKind::kDot:
      params = absl::StrCat("  p = ", mat(n, n), " parameter(0)\n  q = ", mat(n, n), " parameter(1)\n");
      inst = absl::StrCat(mat(n, n), " dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
      *elements = 2.0 * static_cast<double>(n * n * n);
      break;
    case KernelKind::kFusionRegister:
    case KernelKind::kFusionBlock:
    case KernelKind::kFusionReduce: {
      // A chain of `nodes` adds (the register path; integers: the block loop) or clamps (float
      // types off the register path: the block loop), then for kFusionReduce a row reduce of
      // the chain's result.
      const bool reduce = kind == KernelKind::kFusionReduce;
      const bool block = kind == KernelKind::kFusionBlock && t != "u32";
      const std::string in = reduce ? absl::StrCat(t, "[", r, ",16]") : absl::StrCat(t, "[", n, "]");
      for (int k = 0; k < count; ++k) {
        comps += absl::StrCat("f", k, " {\n  a = ", in, " parameter(0)\n  b = ", in, " parameter(1)\n");
        std::string prev = "a";
        for (int j = 0; j < nodes; ++j) {
          const bool last = j + 1 == nodes && !reduce;
          absl::StrAppend(&comps, last ? "  ROOT " : "  ", "c", j, " = ", in,
                          block ? absl::StrCat(" clamp(b, ", prev, ", a)\n") : absl::StrCat(" add(", prev, ", b)\n"));
          prev = absl::StrCat("c", j);
        }
        if (reduce) {
          absl::StrAppend(&comps, "  z = ", t, "[] constant(0)\n  ROOT o = ", t, "[", r, "] reduce(", prev,
                          ", z), dimensions={1}, to_apply=add\n");
        }
        comps += "}\n";
      }
      params = absl::StrCat("  p = ", in, " parameter(0)\n  q = ", in, " parameter(1)\n");
      inst = absl::StrCat(reduce ? absl::StrCat(t, "[", r, "]") : in, " fusion(p, q), kind=kLoop");
      break;
    }
    default: return "";
  }
  std::string text = absl::StrCat("HloModule kinds\n", comps, "ENTRY e {\n", params);
  std::string outs, shapes;
  for (int k = 0; k < count; ++k) {
    std::string line = inst;
    if (IsFusionKind(kind)) absl::StrAppend(&line, ", calls=f", k);
    absl::StrAppend(&text, "  k", k, " = ", line, "\n");
    absl::StrAppend(&outs, k ? ", " : "", "k", k);
    absl::StrAppend(&shapes, k ? ", " : "", line.substr(0, line.find(' ')));
  }
  absl::StrAppend(&text, "  ROOT t = (", shapes, ") tuple(", outs, ")\n}\n");
  return text;
}

// `count` u32[n] block-loop fusions (n even) of four ops: two slices, a concatenate and an add
// (`moves`), or four adds/xors.
std::string MoveModule(int count, int64_t n, bool moves) {
  const std::string s = absl::StrCat("u32[", n, "]"), h = absl::StrCat("u32[", n / 2, "]");
  std::string text = "HloModule moves\n", outs, shapes;
  for (int k = 0; k < count; ++k) {
    absl::StrAppend(&text, "f", k, " {\n  a = ", s, " parameter(0)\n  b = ", s, " parameter(1)\n");
    if (moves) {
      absl::StrAppend(&text, "  x = ", h, " slice(a), slice={[0:", n / 2, "]}\n  y = ", h,
                      " slice(b), slice={[", n / 2, ":", n, "]}\n  c = ", s,
                      " concatenate(x, y), dimensions={0}\n");
    } else {
      absl::StrAppend(&text, "  x = ", s, " add(a, b)\n  y = ", s, " xor(x, a)\n  c = ", s, " add(y, b)\n");
    }
    absl::StrAppend(&text, "  ROOT d = ", s, " add(c, b)\n}\n");
  }
  absl::StrAppend(&text, "ENTRY e {\n  p = ", s, " parameter(0)\n  q = ", s, " parameter(1)\n");
  for (int k = 0; k < count; ++k) {
    absl::StrAppend(&text, "  k", k, " = ", s, " fusion(p, q), kind=kLoop, calls=f", k, "\n");
    absl::StrAppend(&outs, k ? ", " : "", "k", k);
    absl::StrAppend(&shapes, k ? ", " : "", s);
  }
  absl::StrAppend(&text, "  ROOT t = (", shapes, ") tuple(", outs, ")\n}\n");
  return text;
}

// Fastest of the module's runs within `seconds` (at least 20 runs), or a negative value when it
// cannot be built or run.
double BestRunSeconds(const std::string& text, double seconds) {
  auto m = ParseModule(text);
  if (!m.ok()) {
    std::cerr << "hlox calibrate: kernel module: " << m.status().message() << "\n";
    return -1;
  }
  auto exec = rt::Executor::Create(**m, rt::ExecOptions{1, 0});
  if (!exec.ok()) {
    std::cerr << "hlox calibrate: kernel module: " << exec.status().message() << "\n";
    return -1;
  }
  auto inputs = rt::MakeSeededInputs(**m, 0);
  double best = 1e30;
  const double start = SteadySeconds();
  for (int run = 0; run < 20 || SteadySeconds() - start < seconds; ++run) {
    const double t0 = SteadySeconds();
    if (!(*exec)->Run(inputs).ok()) return -1;
    best = std::min(best, SteadySeconds() - t0);
    if (run > 100000) break;
  }
  return best;
}

// Fits fixed + per-element (and, for fusion kinds, per-node) costs of `kind` with fused element
// type `t`; false when a module cannot be built or run.
bool FitKind(KernelKind kind, const std::string& t, double per_module, KernelKindCost* out) {
  const std::vector<int64_t> sizes = {256, 1024, 4096};
  const std::vector<int64_t> dot_sides = {4, 8, 16};
  std::vector<double> xs, ts;
  for (int64_t n : kind == KernelKind::kDot ? dot_sides : sizes) {
    double x = 0;
    const double few = BestRunSeconds(KindModule(kind, kFew, n, &x, 1, t), per_module);
    const double many = BestRunSeconds(KindModule(kind, kMany, n, &x, 1, t), per_module);
    if (few < 0 || many < 0) break;
    xs.push_back(x);
    ts.push_back(std::max(0.0, many - few) / (kMany - kFew));
  }
  if (xs.size() < 2) return false;
  if (IsFusionKind(kind)) {  // each further fused node, at a tiny and a mid size
    double per_node[2] = {-1, -1};
    for (int s = 0; s < 2; ++s) {
      double x = 0;
      const int64_t n = kNodeSizes[s];
      const double one = BestRunSeconds(KindModule(kind, kMany, n, &x, 1, t), per_module);
      const double more = BestRunSeconds(KindModule(kind, kMany, n, &x, kNodes, t), per_module);
      if (one > 0 && more > 0) per_node[s] = std::max(0.0, more - one) / kMany / (kNodes - 1);
    }
    if (per_node[0] >= 0 && per_node[1] >= 0) {
      const double slope = std::max(0.0, per_node[1] - per_node[0]) / (kNodeSizes[1] - kNodeSizes[0]);
      out->node_ns_per_element = slope * 1e9;
      out->node_us = std::max(0.0, per_node[0] - slope * kNodeSizes[0]) * 1e6;
    }
  }
  // Least squares t = a + b x, both clamped at 0.
  double mx = 0, mt = 0, sxx = 0, sxt = 0;
  for (size_t i = 0; i < xs.size(); ++i) mx += xs[i] / xs.size(), mt += ts[i] / xs.size();
  for (size_t i = 0; i < xs.size(); ++i) {
    sxx += (xs[i] - mx) * (xs[i] - mx);
    sxt += (xs[i] - mx) * (ts[i] - mt);
  }
  const double b = std::max(0.0, sxx > 0 ? sxt / sxx : 0);
  const double a = std::max(0.0, mt - b * mx);
  out->fixed_us = a * 1e6;
  out->ns_per_element = b * 1e9;
  return true;
}

}  // namespace

KernelKindCosts MeasureKernelKindCosts(double seconds, const KernelKindCosts& fallback) {
  KernelKindCosts out = fallback;
  // 8 plain kinds x 6 modules; fusion kinds 10 modules per fused type (f32 and bf16 for all
  // three, u32 for the two off the register path): 80; fused data movement: 6.
  const double per_module = seconds / (8 * 6 + 8 * 10 + 6);
  for (int k = 0; k < kNumKernelKinds; ++k) {
    const KernelKind kind = static_cast<KernelKind>(k);
    if (kind == KernelKind::kOther) continue;
    FitKind(kind, "f32", per_module, &out[k]);
    if (!IsFusionKind(kind)) continue;
    KernelKindCost c = out[k];
    c.node_us = out[k].half_node_us, c.node_ns_per_element = out[k].half_node_ns_per_element;
    if (FitKind(kind, "bf16", per_module, &c)) {
      out[k].half_ns_per_element = c.ns_per_element, out[k].half_node_us = c.node_us;
      out[k].half_node_ns_per_element = c.node_ns_per_element;
    }
    c = out[k];
    c.node_us = out[k].int_node_us, c.node_ns_per_element = out[k].int_node_ns_per_element;
    if (kind != KernelKind::kFusionRegister && FitKind(kind, "u32", per_module, &c)) {
      out[k].int_ns_per_element = c.ns_per_element, out[k].int_node_us = c.node_us;
      out[k].int_node_ns_per_element = c.node_ns_per_element;
    }
  }
  // Fused data-movement ops: three of them against three adds/xors, 16 elements; three
  // interleaved rounds, the fastest of each (a burst of load hits one round, not both modules).
  double adds = 1e30, moves = 1e30;
  for (int round = 0; round < 3; ++round) {
    adds = std::min(adds, BestRunSeconds(MoveModule(kMany, 16, false), per_module));
    moves = std::min(moves, BestRunSeconds(MoveModule(kMany, 16, true), per_module));
  }
  if (adds > 0 && moves > 0 && adds < 1e30) {
    const double us = std::max(0.0, moves - adds) / kMany / 3 * 1e6;
    for (KernelKind k : {KernelKind::kFusionRegister, KernelKind::kFusionBlock, KernelKind::kFusionReduce}) {
      out[static_cast<int>(k)].move_node_us = us;
    }
  }
  return out;
}

}  // namespace hlox::cli
