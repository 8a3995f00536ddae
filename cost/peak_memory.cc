// Analytical peak memory by a liveness sweep over the kernel view (rules in peak_memory.h).
#include "cost/peak_memory.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "cost/kernel_model.h"

namespace hlox {
namespace {

int64_t Peak(const Computation& computation, bool include_parameters);

int64_t BodyPeak(const Instruction& i) {
  int64_t best = 0;
  for (const Computation* c : i.called_computations()) best = std::max(best, Peak(*c, false));
  return best;
}

int64_t Peak(const Computation& computation, bool include_parameters) {
  KernelModel m = BuildKernelModel(computation);
  const int64_t n = static_cast<int64_t>(m.kernels.size());
  // Interval [first, last] of kernel positions for each tensor.
  std::unordered_map<TensorId, std::pair<int64_t, int64_t>, TensorIdHash> live;
  for (const auto& [t, bytes] : m.tensor_bytes) {
    Opcode op = t.producer->opcode();
    if (op == Opcode::kParameter || op == Opcode::kConstant) live[t] = {0, n};
  }
  for (int64_t p = 0; p < n; ++p) {
    for (const auto& w : m.kernels[p].writes) {
      auto it = live.find(w.tensor);
      if (it == live.end()) live[w.tensor] = {p, p};
    }
    for (const auto& r : m.kernels[p].reads) {
      auto it = live.find(r.tensor);
      if (it != live.end()) it->second.second = std::max(it->second.second, p);
    }
  }
  for (const auto& o : m.outputs) {
    auto it = live.find(o.tensor);
    if (it != live.end()) it->second.second = n;
  }
  std::vector<int64_t> delta(n + 2, 0);
  for (const auto& [t, iv] : live) {
    if (!include_parameters && t.producer->opcode() == Opcode::kParameter) continue;
    int64_t bytes = static_cast<int64_t>(m.tensor_bytes[t]);
    delta[iv.first] += bytes;
    delta[iv.second + 1] -= bytes;
  }
  int64_t cur = 0, peak = 0;
  for (int64_t p = 0; p <= n; ++p) {
    cur += delta[p];
    int64_t extra = p < n && m.kernels[p].control_flow ? BodyPeak(*m.kernels[p].instr) : 0;
    peak = std::max(peak, cur + extra);
  }
  return peak;
}

}  // namespace

int64_t AnalyticalPeakMemory(const Computation& computation) { return Peak(computation, true); }

}  // namespace hlox
