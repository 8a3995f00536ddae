// Liveness planning without allocation; see memory_plan.h. Mirrors Executor::Impl::BuildPlan:
// the same order, the same last uses, values released right after their last reader.
#include "runtime/core/memory_plan.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "ir/primitive_type.h"

namespace hlox::rt {
namespace {

constexpr int64_t kMaxBytes = std::numeric_limits<int64_t>::max();

int64_t SaturatingAdd(int64_t a, int64_t b) { return a > kMaxBytes - b ? kMaxBytes : a + b; }

// Bytes of every array leaf of `shape`, saturating (a declared shape may be absurd).
int64_t LeafBytes(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t sum = 0;
    for (const Shape& e : shape.tuple_shapes()) sum = SaturatingAdd(sum, LeafBytes(e));
    return sum;
  }
  if (!shape.IsArray()) return 0;
  int64_t bytes = PrimitiveByteSize(shape.element_type());
  for (int64_t d : shape.dims()) {
    if (d <= 0) return 0;
    if (bytes > kMaxBytes / d) return kMaxBytes;
    bytes *= d;
  }
  return bytes;
}

// Ops whose result is a view of (or a container for) their operands' buffers.
bool IsView(Opcode op) {
  return op == Opcode::kReshape || op == Opcode::kBitcast || op == Opcode::kTuple ||
         op == Opcode::kGetTupleElement || op == Opcode::kOptimizationBarrier;
}

// Computations whose body runs through the Executor while the calling step runs (fusions run
// as fused loops; reducers and comparators are scalar programs of negligible size).
bool RunsBody(Opcode op) {
  return op == Opcode::kWhile || op == Opcode::kCall || op == Opcode::kConditional;
}

struct Planner {
  std::unordered_map<const Computation*, int64_t> body_peaks;  // without parameters

  int64_t BodyPeak(const Computation& comp) {
    auto it = body_peaks.find(&comp);
    if (it != body_peaks.end()) return it->second;
    body_peaks[&comp] = 0;  // a recursive call graph is not valid HLO; stop here if one appears
    const int64_t peak = Peak(comp, false);
    body_peaks[&comp] = peak;
    return peak;
  }

  int64_t Peak(const Computation& comp, bool include_parameters) {
    const std::vector<const Instruction*> order = LiveOrder(comp);
    const int n = static_cast<int>(order.size());
    if (n == 0) return 0;
    std::unordered_map<const Instruction*, int> slot_of;
    for (int i = 0; i < n; ++i) slot_of[order[i]] = i;
    // Buffer groups: a view joins its operands' group (union-find over slots).
    std::vector<int> parent(n);
    std::iota(parent.begin(), parent.end(), 0);
    auto find = [&](int s) {
      while (parent[s] != s) s = parent[s] = parent[parent[s]];
      return s;
    };
    std::vector<int> last_use(n, -1);
    for (int i = 0; i < n; ++i) {
      for (const Instruction* op : order[i]->operands()) {
        const int s = slot_of.at(op);
        last_use[s] = std::max(last_use[s], i);
        if (IsView(order[i]->opcode())) parent[find(s)] = find(i);
      }
    }
    // Per group: bytes it owns and its live interval [first, last] in steps (n = the end).
    std::vector<int64_t> bytes(n, 0);
    std::vector<int> first(n, n), last(n, -1);
    const int root = slot_of.at(comp.root());
    for (int i = 0; i < n; ++i) {
      const Instruction& instr = *order[i];
      const Opcode op = instr.opcode();
      const int g = find(i);
      int from = i, to = last_use[i] >= 0 ? last_use[i] : i;
      if (op == Opcode::kParameter || op == Opcode::kConstant) from = 0, to = n;
      if (i == root) to = n;
      first[g] = std::min(first[g], from);
      last[g] = std::max(last[g], to);
      const bool owns = !IsView(op) && (op != Opcode::kParameter || include_parameters);
      if (owns) bytes[g] = SaturatingAdd(bytes[g], LeafBytes(instr.shape()));
    }
    // Sums in 128 bits: each group is below 2^63, so no sum of at most 2^31 of them overflows.
    std::vector<__int128> delta(n + 2, 0);
    for (int g = 0; g < n; ++g) {
      if (bytes[g] == 0 || last[g] < 0) continue;
      delta[first[g]] += bytes[g];
      delta[last[g] + 1] -= bytes[g];
    }
    __int128 live = 0, peak = 0;
    for (int i = 0; i < n; ++i) {
      live += delta[i];
      int64_t extra = 0;
      if (RunsBody(order[i]->opcode())) {
        for (const Computation* c : order[i]->called_computations()) {
          extra = std::max(extra, BodyPeak(*c));
        }
      }
      peak = std::max(peak, live + extra);
    }
    return peak > kMaxBytes ? kMaxBytes : static_cast<int64_t>(peak);
  }
};

}  // namespace

std::vector<const Instruction*> LiveOrder(const Computation& comp) {
  std::vector<const Instruction*> order;
  std::unordered_map<const Instruction*, int> state;  // 1 visiting, 2 done
  std::vector<std::pair<const Instruction*, size_t>> stack;
  auto deps = [](const Instruction* i, size_t k) -> const Instruction* {
    size_t n = i->operands().size();
    if (k < n) return i->operand(static_cast<int64_t>(k));
    k -= n;
    if (k < i->control_predecessors().size()) return i->control_predecessors()[k];
    return nullptr;
  };
  if (comp.root() == nullptr) return order;
  stack.push_back({comp.root(), 0});
  state[comp.root()] = 1;
  while (!stack.empty()) {
    auto& [instr, k] = stack.back();
    const Instruction* d = deps(instr, k);
    if (d == nullptr) {
      state[instr] = 2;
      order.push_back(instr);
      stack.pop_back();
      continue;
    }
    ++k;
    if (state[d] == 0) {
      state[d] = 1;
      stack.push_back({d, 0});
    }
  }
  return order;
}

int64_t PlannedPeakBytes(const Computation& comp, bool include_parameters) {
  return Planner().Peak(comp, include_parameters);
}

int64_t PlannedPeakBytes(const Module& module) {
  return module.entry() ? PlannedPeakBytes(*module.entry(), true) : 0;
}

}  // namespace hlox::rt
