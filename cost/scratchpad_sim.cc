// The trace-driven scratchpad simulator (scratchpad.h): every line each tile step touches, on a
// fully associative least-recently-used scratchpad with dirty bits.
#include <algorithm>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "cost/kernel_model.h"
#include "cost/loop_nest.h"
#include "cost/scratchpad.h"
#include "cost/scratchpad_internal.h"

namespace hlox {
namespace {

// A scratchpad of `capacity` lines, least recently used out first. Lines are global numbers.
class Lru {
 public:
  explicit Lru(int64_t capacity) : cap_(std::max<int64_t>(1, capacity)) {
    slot_.reserve(static_cast<size_t>(std::min<int64_t>(cap_, int64_t{1} << 22)));
  }

  // A read or a write of `line`; `fill` says whether a miss must read the line from DRAM (a
  // write to a line with no DRAM copy yet does not).
  void Touch(int64_t line, bool write, bool fill) {
    auto it = slot_.find(line);
    int32_t s;
    if (it != slot_.end()) {
      s = it->second;
      Unlink(s);
    } else {
      if (fill || !write) ++reads;
      if (static_cast<int64_t>(slot_.size()) >= cap_) Evict();
      s = Alloc(line);
      slot_[line] = s;
    }
    PushFront(s);
    if (write) nodes_[s].dirty = true;
  }
  // Removes `line` without writing it back (its tensor is dead).
  void Drop(int64_t line) {
    auto it = slot_.find(line);
    if (it == slot_.end()) return;
    Unlink(it->second);
    free_.push_back(it->second);
    slot_.erase(it);
  }
  // Writes `line` back if it is resident and dirty; it stays, clean.
  void Flush(int64_t line) {
    auto it = slot_.find(line);
    if (it == slot_.end() || !nodes_[it->second].dirty) return;
    nodes_[it->second].dirty = false;
    ++writes;
    written_back.insert(line);
  }
  bool Resident(int64_t line) const { return slot_.count(line) != 0; }

  int64_t reads = 0, writes = 0;
  absl::flat_hash_set<int64_t> written_back;  // lines of produced tensors that have a DRAM copy

 private:
  struct Node {
    int64_t line = 0;
    int32_t prev = -1, next = -1;
    bool dirty = false;
  };
  int32_t Alloc(int64_t line) {
    int32_t s;
    if (!free_.empty()) {
      s = free_.back();
      free_.pop_back();
    } else {
      s = static_cast<int32_t>(nodes_.size());
      nodes_.push_back({});
    }
    nodes_[s] = Node{line, -1, -1, false};
    return s;
  }
  void Unlink(int32_t s) {
    Node& n = nodes_[s];
    if (n.prev >= 0) nodes_[n.prev].next = n.next; else head_ = n.next;
    if (n.next >= 0) nodes_[n.next].prev = n.prev; else tail_ = n.prev;
    n.prev = n.next = -1;
  }
  void PushFront(int32_t s) {
    nodes_[s].next = head_;
    nodes_[s].prev = -1;
    if (head_ >= 0) nodes_[head_].prev = s;
    head_ = s;
    if (tail_ < 0) tail_ = s;
  }
  void Evict() {
    const int32_t s = tail_;
    if (s < 0) return;
    Unlink(s);
    if (nodes_[s].dirty) {
      ++writes;
      written_back.insert(nodes_[s].line);
    }
    slot_.erase(nodes_[s].line);
    free_.push_back(s);
  }

  int64_t cap_;
  absl::flat_hash_map<int64_t, int32_t> slot_;
  std::vector<Node> nodes_;
  std::vector<int32_t> free_;
  int32_t head_ = -1, tail_ = -1;
};

class Simulator {
 public:
  Simulator(const Computation& comp, const ScratchpadTarget& t, int64_t max_touches)
      : m_(sp::ScratchpadKernels(comp)), t_(t), life_(sp::Lifetimes(m_)), budget_(max_touches),
        lru_(t.scratchpad_bytes / t.line_bytes) {
    // Every tensor on its own lines.
    int64_t next = 0;
    auto place = [&](const TensorId& id, double bytes) {
      if (base_.count(id)) return;
      const int64_t lines = std::max<int64_t>(1, (static_cast<int64_t>(bytes) + t_.line_bytes - 1) / t_.line_bytes);
      base_[id] = {next, lines};
      next += lines;
    };
    for (const Kernel& k : m_.kernels) {
      for (const auto& op : k.operand_tensors) {
        for (const TensorAccess& a : op) place(a.tensor, m_.tensor_bytes[a.tensor]);
      }
      for (const TensorAccess& w : k.writes) place(w.tensor, m_.tensor_bytes[w.tensor]);
    }
    for (const TensorAccess& o : m_.outputs) place(o.tensor, m_.tensor_bytes[o.tensor]);
    deaths_ = life_.DeathsByKernel(m_.kernels.size());
  }

  absl::StatusOr<TrafficReport> Run() {
    TrafficReport rep;
    const double line = static_cast<double>(t_.line_bytes);
    for (const sp::StageGroup& g : sp::PlanStageGroups(m_, life_, t_)) {
      const Kernel& k = m_.kernels[g.first];
      std::vector<KernelTraffic> kts(g.count);
      for (size_t i = 0; i < g.count; ++i) kts[i].name = m_.kernels[g.first + i].instr->name();
      KernelTraffic& kt = kts.back();  // a group's traffic is charged to its last member (as the model does)
      const int64_t r0 = lru_.reads, w0 = lru_.writes;
      double body_r = 0, body_w = 0;
      if (k.control_flow) {
        kt.tiling = "control flow";
        for (const TensorAccess& r : k.reads) ForLines(r.tensor, [&](int64_t l) { lru_.Flush(l); });
        const int64_t left = budget_ - touches_;
        absl::StatusOr<TrafficReport> body = sp::ControlFlowTraffic(
            *k.instr, t_, [left](const Computation& c, const ScratchpadTarget& tt) {
              return SimulateScratchpadTraffic(c, tt, left);
            });
        if (!body.ok()) return body.status();
        body_r = body->read_bytes;
        body_w = body->write_bytes;
      } else if (g.count == 1) {
        kt.tiling = g.nests[0].tiling;
        if (absl::Status st = Replay(g.nests[0], 0, -1); !st.ok()) return st;
      } else if (absl::Status st = ReplayGroup(g, kts); !st.ok()) {
        return st;
      }
      for (size_t p = g.first; p <= g.last(); ++p) {
        for (const TensorId& id : deaths_[p]) ForLines(id, [&](int64_t l) { lru_.Drop(l); });
      }
      kt.read_bytes = static_cast<double>(lru_.reads - r0) * line + body_r;
      kt.write_bytes = static_cast<double>(lru_.writes - w0) * line + body_w;
      for (size_t i = 0; i < g.count; ++i) sp::AddKernel(rep, *m_.kernels[g.first + i].instr, std::move(kts[i]), t_);
    }
    const int64_t w0 = lru_.writes;
    for (const TensorAccess& o : m_.outputs) ForLines(o.tensor, [&](int64_t l) { lru_.Flush(l); });
    sp::AddEnd(rep, static_cast<double>(lru_.writes - w0) * line, t_);
    return rep;
  }

 private:
  template <typename Fn>
  void ForLines(const TensorId& id, Fn fn) {
    auto it = base_.find(id);
    if (it == base_.end()) return;
    for (int64_t l = 0; l < it->second.second; ++l) fn(it->second.first + l);
  }
  // Whether a miss on a line of `id` must read it: always for tensors the computation did not
  // produce here (parameters, constants), else once the line has been written back.
  bool Fill(const TensorId& id, int64_t line) const {
    const Opcode op = id.producer->opcode();
    if (op == Opcode::kParameter || op == Opcode::kConstant) return true;
    return lru_.written_back.contains(line);
  }

  // Replays steps [first, last) of `nest` (last -1: to the end), innermost loop fastest.
  absl::Status Replay(const sp::LoopNest& nest, int64_t first, int64_t last) {
    const int n = static_cast<int>(nest.loops.size());
    std::vector<int64_t> step(n, 0);
    sp::Box box;
    box.lo.assign(n, 0);
    box.len.assign(n, 1);
    std::vector<std::pair<int64_t, int64_t>> runs;
    int64_t steps = 1;
    for (const sp::Loop& l : nest.loops) steps *= l.Trips();
    if (last < 0 || last > steps) last = steps;
    for (int64_t j = n - 1, r = first; j >= 0; --j) {
      step[j] = r % nest.loops[j].Trips();
      r /= nest.loops[j].Trips();
    }
    for (int64_t s = first; s < last; ++s) {
      for (int j = 0; j < n; ++j) {
        box.lo[j] = step[j] * nest.loops[j].tile;
        box.len[j] = std::min(nest.loops[j].tile, nest.loops[j].extent - box.lo[j]);
      }
      for (const sp::Access& a : nest.accesses) {
        if (a.opaque && ((!a.write && s != 0) || (a.write && s != steps - 1))) continue;
        auto it = base_.find(a.tensor);
        if (it == base_.end()) continue;
        sp::BoxLineRuns(a, box, t_.line_bytes, &runs);
        for (const auto& [l0, l1] : runs) {
          for (int64_t l = l0; l <= l1 && l < it->second.second; ++l) {
            const int64_t g = it->second.first + l;
            lru_.Touch(g, a.write, !a.write || Fill(a.tensor, g));
          }
          touches_ += l1 - l0 + 1;
        }
      }
      if (touches_ > budget_) {
        return absl::ResourceExhaustedError(
            absl::StrCat("scratchpad simulation: more than ", budget_, " line touches (at ", nest.instr->name(), ")"));
      }
      for (int j = n - 1; j >= 0; --j) {  // the next step, innermost loop fastest
        if (++step[j] < nest.loops[j].Trips()) break;
        step[j] = 0;
      }
    }
    return absl::OkStatus();
  }

  // A staging group: per step of the group loop, each member's steps for it in turn; then the
  // rows of the group's internal tensors that step finished are dropped (the line a row ends
  // inside waits for the next step, which writes the rest of it).
  absl::Status ReplayGroup(const sp::StageGroup& g, std::vector<KernelTraffic>& kts) {
    for (size_t i = 0; i < g.count; ++i) kts[i].tiling = sp::StagedTiling(g, i);
    const int64_t trips = g.Trips();
    for (int64_t i = 0; i < trips; ++i) {
      for (const sp::LoopNest& nest : g.nests) {
        int64_t inner = 1;
        for (size_t j = 1; j < nest.loops.size(); ++j) inner *= nest.loops[j].Trips();
        if (absl::Status st = Replay(nest, i * inner, (i + 1) * inner); !st.ok()) return st;
      }
      const int64_t end = std::min(g.extent, (i + 1) * g.tile);
      for (const sp::StagedTensor& s : g.tensors) {
        auto it = base_.find(s.tensor);
        if (s.row_bytes == 0 || it == base_.end()) continue;
        const int64_t from = i * g.tile * s.row_bytes / t_.line_bytes;
        const int64_t to = i + 1 == trips ? it->second.second : end * s.row_bytes / t_.line_bytes;
        for (int64_t l = from; l < to && l < it->second.second; ++l) lru_.Drop(it->second.first + l);
      }
    }
    return absl::OkStatus();
  }

  KernelModel m_;
  const ScratchpadTarget& t_;
  sp::TensorLifetimes life_;
  int64_t budget_;
  int64_t touches_ = 0;
  Lru lru_;
  std::unordered_map<TensorId, std::pair<int64_t, int64_t>, TensorIdHash> base_;  // first line, lines
  std::vector<std::vector<TensorId>> deaths_;  // per kernel, the tensors dead after it
};

}  // namespace

absl::StatusOr<TrafficReport> SimulateScratchpadTraffic(const Computation& computation,
                                                        const ScratchpadTarget& target, int64_t max_touches) {
  return Simulator(computation, target, max_touches).Run();
}

}  // namespace hlox
