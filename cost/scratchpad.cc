// Scratchpad traffic simulation on the kernel view (rules in scratchpad.h).
#include "cost/scratchpad.h"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <vector>

#include "cost/analytical.h"
#include "cost/kernel_model.h"

namespace hlox {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

struct Resident {
  double bytes = 0;
  bool dirty = false;  // produced here and not yet in DRAM
};

double ControlFlowTraffic(const Instruction& i, int64_t s) {
  const auto& called = i.called_computations();
  double t = 0;
  if (i.opcode() == Opcode::kWhile) {
    for (const Computation* c : called) t += ScratchpadTraffic(*c, s);
    return t * static_cast<double>(WhileTripCount(i));
  }
  for (const Computation* c : called) {
    double ct = ScratchpadTraffic(*c, s);
    t = i.opcode() == Opcode::kConditional ? std::max(t, ct) : t + ct;
  }
  return t;
}

}  // namespace

double ScratchpadTraffic(const Computation& computation, int64_t scratchpad_bytes) {
  const double cap = static_cast<double>(std::max<int64_t>(0, scratchpad_bytes));
  KernelModel m = BuildKernelModel(computation);
  const int64_t end = static_cast<int64_t>(m.kernels.size());
  // Positions of every use of each tensor, ascending; outputs are used at `end`.
  std::unordered_map<TensorId, std::vector<int64_t>, TensorIdHash> uses;
  for (int64_t p = 0; p < end; ++p) {
    for (const auto& r : m.kernels[p].reads) uses[r.tensor].push_back(p);
  }
  for (const auto& o : m.outputs) uses[o.tensor].push_back(end);
  auto next_use = [&](const TensorId& t, int64_t after) {
    auto it = uses.find(t);
    if (it == uses.end()) return kNever;
    auto u = std::upper_bound(it->second.begin(), it->second.end(), after);
    return u == it->second.end() ? kNever : *u;
  };

  std::unordered_map<TensorId, Resident, TensorIdHash> resident;
  double resident_bytes = 0;
  double traffic = 0;
  auto drop = [&](const TensorId& t, bool write_back) {
    auto it = resident.find(t);
    if (it == resident.end()) return;
    if (write_back && it->second.dirty) traffic += it->second.bytes;
    resident_bytes -= it->second.bytes;
    resident.erase(it);
  };

  for (int64_t p = 0; p < end; ++p) {
    const Kernel& k = m.kernels[p];
    if (k.control_flow) {
      for (const auto& r : k.reads) {
        auto it = resident.find(r.tensor);
        if (it != resident.end() && it->second.dirty) {
          traffic += it->second.bytes;  // flushed for the body, stays resident and clean
          it->second.dirty = false;
        }
      }
      traffic += ControlFlowTraffic(*k.instr, scratchpad_bytes);
      continue;  // outputs land in DRAM
    }
    double working_set = k.ReadBytes() + k.WriteBytes();
    bool streams = working_set > cap;
    for (const auto& r : k.reads) {
      if (resident.count(r.tensor)) continue;
      traffic += r.bytes;
      double full = m.tensor_bytes[r.tensor];
      if (!streams && r.bytes >= full) {
        resident[r.tensor] = {full, false};
        resident_bytes += full;
      }
    }
    for (const auto& w : k.writes) {
      if (streams) {
        traffic += w.bytes;
      } else {
        drop(w.tensor, false);
        resident[w.tensor] = {w.bytes, true};
        resident_bytes += w.bytes;
      }
    }
    // Drop dead tensors, then evict furthest-next-use first until the set fits.
    std::vector<std::pair<int64_t, TensorId>> order;
    for (const auto& [t, r] : resident) order.push_back({next_use(t, p), t});
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first > b.first;
      if (a.second.producer != b.second.producer) {
        return a.second.producer->unique_id() < b.second.producer->unique_id();
      }
      return a.second.leaf < b.second.leaf;
    });
    for (const auto& [nu, t] : order) {
      if (nu == kNever) {
        drop(t, false);
      } else if (resident_bytes > cap) {
        drop(t, true);
      }
    }
  }
  for (const auto& o : m.outputs) drop(o.tensor, true);
  return traffic;
}

}  // namespace hlox
