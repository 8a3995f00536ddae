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
#include "runtime/executor.h"

namespace hlox::cli {
namespace {

constexpr int kFew = 4, kMany = 36;  // kernels per module; the cost is the difference / 32
constexpr int kNodes = 9;            // fused adds of the per-node measurement (against 1)

bool IsFusionKind(KernelKind k) {
  return k == KernelKind::kFusionRegister || k == KernelKind::kFusionBlock || k == KernelKind::kFusionReduce;
}

// HLO text of `count` independent kernels of `kind` whose size parameter is `n` (output
// elements; the matrix side for kDot); *elements gets the fit's x (FLOPs for kDot).
std::string KindModule(KernelKind kind, int count, int64_t n, double* elements, int nodes = 1) {
  const int64_t r = n / 16;
  std::string comps = "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                      "  ROOT s = f32[] add(x, y)\n}\n";
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
      // A chain of `nodes` f32 adds (the register path) or clamps (not on the register path:
      // the block loop), then for kFusionReduce a row reduce of the chain's result.
      const bool reduce = kind == KernelKind::kFusionReduce;
      const bool block = kind == KernelKind::kFusionBlock;
      const std::string t = "f32";
      const std::string in = reduce ? mat(r, 16) : absl::StrCat(t, "[", n, "]");
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
          absl::StrAppend(&comps, "  z = f32[] constant(0)\n  ROOT o = ", vec(r), " reduce(", prev,
                          ", z), dimensions={1}, to_apply=add\n");
        }
        comps += "}\n";
      }
      params = absl::StrCat("  p = ", in, " parameter(0)\n  q = ", in, " parameter(1)\n");
      inst = absl::StrCat(reduce ? vec(r) : in, " fusion(p, q), kind=kLoop");
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

}  // namespace

KernelKindCosts MeasureKernelKindCosts(double seconds, const KernelKindCosts& fallback) {
  KernelKindCosts out = fallback;
  const std::vector<int64_t> sizes = {256, 1024, 4096};
  const std::vector<int64_t> dot_sides = {4, 8, 16};
  const double per_module = seconds / (kNumKernelKinds - 1) / 7;
  for (int k = 0; k < kNumKernelKinds; ++k) {
    const KernelKind kind = static_cast<KernelKind>(k);
    if (kind == KernelKind::kOther) continue;
    std::vector<double> xs, ts;
    for (int64_t n : kind == KernelKind::kDot ? dot_sides : sizes) {
      double x = 0;
      const double few = BestRunSeconds(KindModule(kind, kFew, n, &x), per_module);
      const double many = BestRunSeconds(KindModule(kind, kMany, n, &x), per_module);
      if (few < 0 || many < 0) break;
      xs.push_back(x);
      ts.push_back(std::max(0.0, many - few) / (kMany - kFew));
    }
    if (xs.size() < 2) continue;
    if (IsFusionKind(kind)) {  // each further fused node, at the smallest size
      double x = 0;
      const double one = BestRunSeconds(KindModule(kind, kMany, sizes[0], &x, 1), per_module);
      const double more = BestRunSeconds(KindModule(kind, kMany, sizes[0], &x, kNodes), per_module);
      if (one > 0 && more > 0) out[k].node_us = std::max(0.0, more - one) / kMany / (kNodes - 1) * 1e6;
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
    out[k].fixed_us = a * 1e6;
    out[k].ns_per_element = b * 1e9;
  }
  return out;
}

}  // namespace hlox::cli
