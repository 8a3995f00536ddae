// The scratchpad target and the analytical traffic model (rules in scratchpad.h).
#include "cost/scratchpad.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include "absl/strings/str_format.h"
#include "cost/analytical.h"
#include "cost/calibrate.h"
#include "cost/kernel_model.h"
#include "cost/loop_nest.h"
#include "cost/scratchpad_internal.h"

namespace hlox {

std::string ScratchpadTarget::ToString() const {
  return absl::StrFormat("%s (%lld KiB scratchpad, %lld-byte lines, %g GB/s, %g TFLOP/s)", name,
                         static_cast<long long>(scratchpad_bytes >> 10), static_cast<long long>(line_bytes), dram_gbs,
                         tflops);
}

ScratchpadTarget DefaultScratchpadTarget() { return ScratchpadTarget{}; }

absl::StatusOr<ScratchpadTarget> LoadScratchpadTarget(const std::string& path) {
  absl::StatusOr<nlohmann::json> j = ReadJsonObjectFile(path, "scratchpad target");
  if (!j.ok()) return j.status();
  ScratchpadTarget t;
  try {
    t.name = j->value("name", path);
    t.scratchpad_bytes = j->at("scratchpad_bytes").get<int64_t>();
    t.line_bytes = j->value("line_bytes", t.line_bytes);
    t.dram_gbs = j->value("dram_gbs", t.dram_gbs);
    t.tflops = j->value("tflops", t.tflops);
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrFormat("scratchpad target %s: %s", path, e.what()));
  }
  if (t.scratchpad_bytes <= 0 || t.line_bytes <= 0 || t.line_bytes > t.scratchpad_bytes || !(t.dram_gbs > 0) ||
      !(t.tflops > 0)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "scratchpad target %s: need scratchpad_bytes > 0, 0 < line_bytes <= scratchpad_bytes, dram_gbs > 0 and "
        "tflops > 0",
        path));
  }
  return t;
}

ScratchpadTarget CachedScratchpadTarget() {
  // Loaded again when the variable changes (a command's --scratchpad-target sets it for the
  // workers it starts).
  static std::mutex mu;
  static std::string loaded_from;
  static ScratchpadTarget target = DefaultScratchpadTarget();
  const char* env = std::getenv("HLOX_SCRATCHPAD_TARGET");
  const std::string path = env == nullptr ? "" : env;
  std::lock_guard<std::mutex> lock(mu);
  if (path == loaded_from) return target;
  loaded_from = path;
  target = DefaultScratchpadTarget();
  if (path.empty()) return target;
  absl::StatusOr<ScratchpadTarget> t = LoadScratchpadTarget(path);
  if (t.ok()) {
    target = *t;
  } else {
    std::fprintf(stderr, "hlox: HLOX_SCRATCHPAD_TARGET: %s; using the built-in target\n",
                 std::string(t.status().message()).c_str());
  }
  return target;
}

namespace sp {

KernelModel ScratchpadKernels(const Computation& computation) {
  KernelModel m = BuildKernelModel(computation);
  std::unordered_map<TensorId, TensorId, TensorIdHash> alias;
  auto root = [&](const TensorId& t) {
    auto it = alias.find(t);
    return it == alias.end() ? t : it->second;
  };
  auto rename = [&](std::vector<TensorAccess>& v) {
    for (TensorAccess& a : v) a.tensor = root(a.tensor);
  };
  for (Kernel& k : m.kernels) {
    rename(k.reads);
    for (auto& op : k.operand_tensors) rename(op);
    if (k.instr->opcode() == Opcode::kDynamicUpdateSlice && !k.operand_tensors.empty() &&
        k.operand_tensors[0].size() == 1 && k.writes.size() == 1 &&
        k.instr->operand(0)->shape().dims() == k.instr->shape().dims()) {
      alias[k.writes[0].tensor] = k.operand_tensors[0][0].tensor;
      m.tensor_bytes[k.operand_tensors[0][0].tensor] =
          std::max(m.tensor_bytes[k.operand_tensors[0][0].tensor], m.tensor_bytes[k.writes[0].tensor]);
    }
    rename(k.writes);
  }
  rename(m.outputs);
  return m;
}

TensorLifetimes Lifetimes(const KernelModel& m) {
  TensorLifetimes life;
  for (size_t p = 0; p < m.kernels.size(); ++p) {
    for (const TensorAccess& r : m.kernels[p].reads) life.last_use[r.tensor] = static_cast<int64_t>(p);
    for (const TensorAccess& w : m.kernels[p].writes) {
      int64_t& last = life.last_use.try_emplace(w.tensor, static_cast<int64_t>(p)).first->second;
      last = std::max(last, static_cast<int64_t>(p));
    }
  }
  for (const TensorAccess& o : m.outputs) life.outputs.insert(o.tensor);
  return life;
}

bool TensorLifetimes::DeadAfter(const TensorId& t, int64_t p) const {
  if (outputs.count(t)) return false;
  auto it = last_use.find(t);
  return it == last_use.end() || it->second <= p;
}

std::vector<std::vector<TensorId>> TensorLifetimes::DeathsByKernel(size_t kernels) const {
  std::vector<std::vector<TensorId>> deaths(kernels);
  for (const auto& [t, last] : last_use) {
    if (!outputs.count(t) && last >= 0 && static_cast<size_t>(last) < kernels) deaths[last].push_back(t);
  }
  return deaths;
}

absl::StatusOr<TrafficReport> ControlFlowTraffic(const Instruction& instr, const ScratchpadTarget& target,
                                                 const BodyCost& body) {
  TrafficReport out;
  for (const Computation* c : instr.called_computations()) {
    absl::StatusOr<TrafficReport> r = body(*c, target);
    if (!r.ok()) return r.status();
    if (instr.opcode() == Opcode::kConditional) {
      if (r->Total() > out.Total()) {
        out.read_bytes = r->read_bytes;
        out.write_bytes = r->write_bytes;
      }
    } else {
      out.read_bytes += r->read_bytes;
      out.write_bytes += r->write_bytes;
    }
  }
  if (instr.opcode() == Opcode::kWhile) {
    const double trips = static_cast<double>(WhileTripCount(instr));
    out.read_bytes *= trips;
    out.write_bytes *= trips;
  }
  return out;
}

void AddKernel(TrafficReport& report, const Instruction& instr, KernelTraffic kernel, const ScratchpadTarget& target) {
  const double flops = InstructionFlops(instr);
  report.read_bytes += kernel.read_bytes;
  report.write_bytes += kernel.write_bytes;
  report.flops += flops;
  report.seconds += std::max(flops / (target.tflops * 1e12), kernel.Total() / (target.dram_gbs * 1e9));
  report.kernels.push_back(std::move(kernel));
}

void AddEnd(TrafficReport& report, double write_bytes, const ScratchpadTarget& target) {
  KernelTraffic end;
  end.name = "(end)";
  end.write_bytes = write_bytes;
  report.write_bytes += write_bytes;
  report.seconds += write_bytes / (target.dram_gbs * 1e9);
  report.kernels.push_back(std::move(end));
}

}  // namespace sp

namespace {

using sp::Access;
using sp::Box;
using sp::LoopNest;

// Per access of a nest: what it moves with a cold scratchpad.
struct NestCost {
  bool fits = false;              // all its data fits at once (W(0) <= S)
  std::vector<double> moved;      // lines per access (reads: loads; writes: write-backs)
  std::vector<double> read_back;  // writes: lines read back for partial results
  std::vector<double> distinct;   // lines of the whole access
  std::vector<double> step;       // lines of its first step
};

// The recursion over the loops, outermost first, of one nest (see scratchpad.h). A box fixes
// the loops outside the current level at one tile, full or the edge tile; the loops from the
// level inward range over their whole extent.
class NestWalk {
 public:
  NestWalk(const LoopNest& nest, const ScratchpadTarget& t)
      : nest_(nest), n_(static_cast<int>(nest.loops.size())), line_(t.line_bytes),
        s_(static_cast<double>(t.scratchpad_bytes)) {}

  // Lines `a` moves over the block `box` at `level`.
  double Moved(const Access& a, int level, Box& box) {
    if (level == n_) return TileLines(a, box);
    bool deps_inside = false;
    for (int j = level; j < n_; ++j) deps_inside = deps_inside || a.DependsOn(j);
    if (!deps_inside && Data(StepBox(box, level), n_) <= s_) return TileLines(a, box);  // same data every step
    const sp::Loop& l = nest_.loops[level];
    const int64_t trips = l.Trips(), rem = l.extent % l.tile;
    const int64_t full = rem == 0 ? trips : trips - 1, edge = rem == 0 ? 0 : 1;
    bool inner_dep = false;
    for (int j = level + 1; j < n_; ++j) inner_dep = inner_dep || a.DependsOn(j);
    // Whether the data comes back across a transition into an iteration of this shape: the
    // bytes touched in between are one iteration (a depends on an inner loop) or one step.
    auto reused = [&](int64_t lo, int64_t len) {
      Set(box, level, lo, len);
      const double distance = inner_dep ? Data(box, level + 1) : Data(StepBox(box, level + 1), n_);
      return distance <= s_;
    };
    const bool reuse_full = full > 0 && reused(0, l.tile);
    const bool reuse_edge = edge > 0 && reused((trips - 1) * l.tile, rem);
    double moved = 0;
    if (a.DependsOn(level)) {
      // Different data per iteration; what neighbours share (halos, lines) is reused when the
      // iteration fits.
      if ((full == 0 || reuse_full) && (edge == 0 || reuse_edge)) {
        Set(box, level, 0, l.extent);
        moved = TileLines(a, box);
      } else {
        if (full > 0) {
          Set(box, level, 0, l.tile);
          moved += static_cast<double>(full) * Moved(a, level + 1, box);
        }
        if (edge > 0) {
          Set(box, level, (trips - 1) * l.tile, rem);
          moved += Moved(a, level + 1, box);
        }
      }
    } else {
      // The same data every iteration: loaded on the first, again on each transition it does
      // not survive.
      if (full > 0) {
        Set(box, level, 0, l.tile);
        const double once = Moved(a, level + 1, box);
        moved += once + (reuse_full ? 0 : static_cast<double>(full - 1) * once);
      }
      if (edge > 0) {
        Set(box, level, (trips - 1) * l.tile, rem);
        const double once = Moved(a, level + 1, box);
        moved += full == 0 || !reuse_edge ? once : 0;
      }
    }
    Set(box, level, 0, l.extent);
    return moved;
  }

  // The bytes all accesses touch over `box` from `level` inward (opaque ones at level 0 only).
  double Data(const Box& box, int level) {
    double w = 0;
    for (const Access& a : nest_.accesses) {
      if (!a.opaque || level == 0) w += sp::ApproxBoxLines(a, box, line_) * static_cast<double>(line_);
    }
    return w;
  }

  Box Whole() const {
    Box b;
    for (const sp::Loop& l : nest_.loops) {
      b.lo.push_back(0);
      b.len.push_back(l.extent);
    }
    return b;
  }

 private:
  static void Set(Box& b, int j, int64_t lo, int64_t len) {
    b.lo[j] = lo;
    b.len[j] = len;
  }
  // `box` with the loops from `level` inward at their first (full) tile: one step.
  Box StepBox(Box box, int level) const {
    for (int j = level; j < n_; ++j) Set(box, j, 0, std::min(nest_.loops[j].tile, nest_.loops[j].extent));
    return box;
  }
  // Lines of `a` over `box`; a full tile of the loop indexing a's innermost view dim is
  // averaged over its first positions (their line offsets differ).
  double TileLines(const Access& a, Box& box) {
    int j = -1;
    if (!a.opaque && !a.index.empty() && a.index.back().terms.size() == 1) j = a.index.back().terms[0].loop;
    if (j < 0 || box.len[j] != nest_.loops[j].tile || box.lo[j] != 0 || nest_.loops[j].Trips() < 2) {
      return sp::ApproxBoxLines(a, box, line_);
    }
    const sp::Loop& l = nest_.loops[j];
    const int64_t positions = std::min<int64_t>(l.extent % l.tile == 0 ? l.Trips() : l.Trips() - 1, 8);
    double sum = 0;
    for (int64_t p = 0; p < positions; ++p) {
      box.lo[j] = p * l.tile;
      sum += sp::ApproxBoxLines(a, box, line_);
    }
    box.lo[j] = 0;
    return sum / static_cast<double>(positions);
  }

  const LoopNest& nest_;
  int n_;
  int64_t line_;
  double s_;
};

NestCost CostNest(const LoopNest& nest, const ScratchpadTarget& t) {
  NestWalk walk(nest, t);
  NestCost c;
  Box whole = walk.Whole();
  const double w0 = walk.Data(whole, 0);
  c.fits = w0 <= static_cast<double>(t.scratchpad_bytes);
  Box step = whole;
  for (size_t j = 0; j < nest.loops.size(); ++j) step.len[j] = std::min(nest.loops[j].tile, nest.loops[j].extent);
  for (const Access& a : nest.accesses) {
    const double distinct = sp::ApproxBoxLines(a, whole, t.line_bytes);
    const double moved = a.opaque || c.fits ? distinct : walk.Moved(a, 0, whole);
    c.distinct.push_back(distinct);
    c.moved.push_back(moved);
    c.read_back.push_back(a.write ? std::max(0.0, moved - distinct) : 0);
    c.step.push_back(a.opaque ? 0 : sp::ApproxBoxLines(a, step, t.line_bytes));
  }
  return c;
}

class Model {
 public:
  Model(const Computation& comp, const ScratchpadTarget& t)
      : m_(sp::ScratchpadKernels(comp)), t_(t), life_(sp::Lifetimes(m_)) {}

  TrafficReport Run() {
    TrafficReport rep;
    for (sp::StageGroup& g : sp::PlanStageGroups(m_, life_, t_)) {
      const Kernel& k = m_.kernels[g.first];
      std::vector<KernelTraffic> kts(g.count);
      for (size_t i = 0; i < g.count; ++i) kts[i].name = m_.kernels[g.first + i].instr->name();
      KernelTraffic& kt = kts.back();  // a group's traffic is charged to its last member
      if (k.control_flow) {
        kt.tiling = "control flow";
        for (const TensorAccess& r : k.reads) {
          auto it = resident_.find(r.tensor);
          if (it != resident_.end() && it->second.dirty) {
            kt.write_bytes += it->second.bytes;
            it->second.dirty = false;
          }
        }
        const TrafficReport body =
            *sp::ControlFlowTraffic(*k.instr, t_, [](const Computation& c, const ScratchpadTarget& tt) {
              return absl::StatusOr<TrafficReport>(ScratchpadTraffic(c, tt));
            });
        kt.read_bytes += body.read_bytes;
        kt.write_bytes += body.write_bytes;
      } else {
        for (size_t i = 0; i < g.count; ++i) {
          kts[i].tiling = g.count == 1 ? g.nests[i].tiling : sp::StagedTiling(g, i);
          kts[i].tiles = sp::DescribeTiles(g.nests[i]);
        }
        bool fits = false;
        const std::vector<Entry> entries = g.count == 1 ? KernelEntries(g.nests[0], &fits) : GroupEntries(g, &fits);
        Settle(entries, fits, kt);
      }
      // Dead tensors leave for free; control flow results are in DRAM.
      for (auto it = resident_.begin(); it != resident_.end();) {
        if (life_.DeadAfter(it->first, static_cast<int64_t>(g.last()))) {
          it = resident_.erase(it);
        } else {
          ++it;
        }
      }
      for (size_t i = 0; i < g.count; ++i) sp::AddKernel(rep, *m_.kernels[g.first + i].instr, std::move(kts[i]), t_);
    }
    double end = 0;
    for (const TensorAccess& o : m_.outputs) {
      auto it = resident_.find(o.tensor);
      if (it != resident_.end() && it->second.dirty) {
        end += it->second.bytes;
        it->second.dirty = false;
      }
    }
    sp::AddEnd(rep, end, t_);
    return rep;
  }

 private:
  struct Res {
    double bytes = 0;
    bool dirty = false;
    int64_t last = 0;
  };

  // What a kernel or group does to one tensor: bytes it loads (a read, unless found resident)
  // or writes back and reads back (a write), and its share of the scratchpad when it ends.
  struct Entry {
    TensorId tensor;
    bool write = false;
    double moved = 0, read_back = 0, share = 0;
  };

  // A single kernel's accesses. What each tensor has resident when the kernel ends: everything
  // it touched when its data fits; when it streams, the most recent S bytes, shared among its
  // tensors as their shares of one step's data (a step's results are written last, so they are
  // there).
  std::vector<Entry> KernelEntries(const LoopNest& nest, bool* fits) const {
    const double line = static_cast<double>(t_.line_bytes);
    const NestCost c = CostNest(nest, t_);
    *fits = c.fits;
    double step_total = 0;
    for (double l : c.step) step_total += l;
    std::vector<Entry> out;
    for (size_t a = 0; a < nest.accesses.size(); ++a) {
      const Access& x = nest.accesses[a];
      Entry e{x.tensor, x.write, c.moved[a] * line, c.read_back[a] * line, c.distinct[a] * line};
      if (!c.fits) e.share = std::min(e.share, Share(c.step[a], step_total));
      out.push_back(e);
    }
    return out;
  }

  // A staging group's tensors: each moved once, its lines over the whole group (a step touches
  // at most half the scratchpad, so what the next step reuses is still there); tensors that
  // live and die inside the group never move.
  std::vector<Entry> GroupEntries(const sp::StageGroup& g, bool* fits) const {
    const double line = static_cast<double>(t_.line_bytes);
    double total = 0, step_total = 0;
    for (const sp::StagedTensor& s : g.tensors) {
      total += s.lines * line;
      if (!s.internal) step_total += s.step_lines;
    }
    *fits = total <= static_cast<double>(t_.scratchpad_bytes);
    std::vector<Entry> out;
    for (const sp::StagedTensor& s : g.tensors) {
      if (s.internal) continue;
      Entry e{s.tensor, s.written, s.lines * line, 0, s.lines * line};
      if (!*fits) e.share = std::min(e.share, Share(s.step_lines, step_total));
      out.push_back(e);
    }
    return out;
  }

  double Share(double step_lines, double step_total) const {
    return static_cast<double>(t_.scratchpad_bytes) * step_lines / std::max(1.0, step_total);
  }

  // Charges `entries` to kt and updates the resident set.
  void Settle(const std::vector<Entry>& entries, bool fits, KernelTraffic& kt) {
    std::unordered_map<TensorId, Res, TensorIdHash> after;
    for (const Entry& x : entries) {
      Res& r = after[x.tensor];
      r.bytes = std::max(r.bytes, x.share);
      r.last = ++clock_;  // a stamp per access, in access order: ties never hang on hash order
      r.dirty = r.dirty || x.write;
      if (x.write) {
        // Every visit ends in a write-back, but for the share still resident at the end
        // (written back later, or never when the result dies there).
        kt.write_bytes += std::max(0.0, x.moved - x.share);
        kt.read_bytes += x.read_back;
      } else {
        // Found resident when the kernel fits. A kernel that streams walks its inputs from
        // their start while the scratchpad holds their ends (a producer's last steps) and
        // pushes those out first: least-recently-used replacement finds none of it.
        double moved = x.moved;
        auto it = resident_.find(x.tensor);
        if (it != resident_.end() && fits) moved -= std::min(moved, it->second.bytes);
        kt.read_bytes += moved;
      }
    }
    // What was resident before: kept beside this kernel's data when that fits (least
    // recently used out first), else pushed out (dirty data written back) by the stream.
    for (auto& [tensor, r] : resident_) {
      auto it = after.find(tensor);
      if (it != after.end()) {
        it->second.dirty = it->second.dirty || r.dirty;
        if (!fits && r.dirty && r.bytes > it->second.bytes) kt.write_bytes += r.bytes - it->second.bytes;
        continue;
      }
      if (fits) {
        after[tensor] = r;
      } else if (r.dirty) {
        kt.write_bytes += r.bytes;
      }
    }
    resident_ = std::move(after);
    kt.write_bytes += EvictToFit();
  }

  // Evicts least recently used tensors until the resident set fits; returns bytes written back.
  double EvictToFit() {
    double total = 0, written = 0;
    for (const auto& [t, r] : resident_) total += r.bytes;
    while (total > static_cast<double>(t_.scratchpad_bytes) && !resident_.empty()) {
      auto victim = resident_.begin();
      for (auto it = resident_.begin(); it != resident_.end(); ++it) {
        if (it->second.last < victim->second.last) victim = it;
      }
      if (victim->second.dirty) written += victim->second.bytes;
      total -= victim->second.bytes;
      resident_.erase(victim);
    }
    return written;
  }

  KernelModel m_;
  const ScratchpadTarget& t_;
  sp::TensorLifetimes life_;
  std::unordered_map<TensorId, Res, TensorIdHash> resident_;
  int64_t clock_ = 0;
};

}  // namespace

TrafficReport ScratchpadTraffic(const Computation& computation, const ScratchpadTarget& target) {
  return Model(computation, target).Run();
}

}  // namespace hlox
