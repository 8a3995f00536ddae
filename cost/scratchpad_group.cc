// Staging groups (scratchpad_internal.h): which consecutive kernels run interleaved over one
// shared loop, so that what one member writes and the next reads stays in the scratchpad.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "cost/loop_nest.h"
#include "cost/scratchpad_internal.h"

namespace hlox::sp {
namespace {

// The loop that alone indexes the outermost view dim of `a` with more than one index
// (coefficient 1, offset 0) and no other dim: the access walks the tensor in rows of that loop.
// -1 when there is none; else *extent is that dim and *row_bytes the bytes of one row.
int RowLoop(const Access& a, int64_t* extent, int64_t* row_bytes) {
  if (a.opaque) return -1;
  size_t d = 0;
  while (d < a.dims.size() && a.dims[d] <= 1) ++d;
  if (d == a.dims.size()) return -1;
  const DimIndex& di = a.index[d];
  if (di.terms.size() != 1 || di.terms[0].coeff != 1 || di.offset != 0) return -1;
  const int loop = di.terms[0].loop;
  for (size_t e = 0; e < a.index.size(); ++e) {
    if (e == d) continue;
    for (const IndexTerm& t : a.index[e].terms) {
      if (t.loop == loop && t.coeff != 0) return -1;
    }
  }
  *extent = a.dims[d];
  *row_bytes = a.elem_bytes;
  for (size_t e = d + 1; e < a.dims.size(); ++e) *row_bytes *= a.dims[e];
  return loop;
}

bool HasOpaque(const LoopNest& nest) {
  for (const Access& a : nest.accesses) {
    if (a.opaque) return true;
  }
  return false;
}

struct Member {
  size_t kernel = 0;
  LoopNest nest;
  int loop = -1;  // the group loop in `nest` (before it is moved outermost)
};

class Planner {
 public:
  Planner(const KernelModel& m, const TensorLifetimes& life, const ScratchpadTarget& t)
      : m_(m), life_(life), t_(t) {}

  std::vector<StageGroup> Run() {
    for (size_t p = 0; p < m_.kernels.size(); ++p) {
      const Kernel& k = m_.kernels[p];
      if (k.control_flow) {
        Close();
        StageGroup g;
        g.first = p;
        groups_.push_back(std::move(g));
        continue;
      }
      LoopNest nest = BuildLoopNest(k, t_.scratchpad_bytes);
      if (!members_.empty() && BackendKey(*k.instr, "hlox_sp_stage") == "join" && TryJoin(p, nest)) continue;
      Close();
      Track(nest);
      members_.push_back({p, std::move(nest), -1});
    }
    Close();
    return std::move(groups_);
  }

 private:
  // Member writes: each in rows of the group loop (recorded in `rows`), or independent of it.
  bool WritesFit(const Member& mb, std::unordered_map<TensorId, int64_t, TensorIdHash>& rows) const {
    for (const Access& a : mb.nest.accesses) {
      if (!a.write) continue;
      int64_t e = 0, rb = 0;
      if (RowLoop(a, &e, &rb) == mb.loop && e == extent_) {
        rows[a.tensor] = rb;
      } else if (a.DependsOn(mb.loop)) {
        return false;
      }
    }
    return true;
  }

  bool TryJoin(size_t p, LoopNest& nest) {
    if (HasOpaque(nest) || HasOpaque(members_[0].nest)) return false;
    // The first member's loop is fixed by the first tensor a second member reads from it.
    std::vector<Member> ms = members_;
    auto rows = rows_;
    const int64_t saved_extent = extent_;
    Member next{p, nest, -1};
    bool linked = false;
    for (const Access& a : nest.accesses) {
      if (a.write) continue;
      if (!written_.count(a.tensor)) continue;
      int64_t e = 0, rb = 0;
      const int loop = RowLoop(a, &e, &rb);
      if (loop < 0 || nest.loops[loop].extent != e || (next.loop >= 0 && loop != next.loop)) return Undo(saved_extent);
      if (ms[0].loop < 0) {
        // Fix the group loop from the first member's write of this tensor.
        for (const Access& w : ms[0].nest.accesses) {
          int64_t we = 0, wrb = 0;
          if (!w.write || w.tensor != a.tensor) continue;
          const int wl = RowLoop(w, &we, &wrb);
          if (wl < 0 || we != e || ms[0].nest.loops[wl].reduction || ms[0].nest.loops[wl].extent != e) {
            return Undo(saved_extent);
          }
          ms[0].loop = wl;
          extent_ = e;
        }
        if (ms[0].loop < 0 || !WritesFit(ms[0], rows)) return Undo(saved_extent);
      }
      auto r = rows.find(a.tensor);
      if (e != extent_ || r == rows.end() || r->second != rb) return Undo(saved_extent);
      next.loop = loop;
      linked = true;
    }
    if (!linked) return Undo(saved_extent);
    for (const Access& a : nest.accesses) {
      if (a.write && touched_.count(a.tensor)) return Undo(saved_extent);  // an in-place update
    }
    if (!WritesFit(next, rows)) return Undo(saved_extent);
    ms.push_back(std::move(next));
    const int64_t tile = GroupTile(ms);
    if (tile < 1) return Undo(saved_extent);
    members_ = std::move(ms);
    rows_ = std::move(rows);
    Track(members_.back().nest);
    return true;
  }

  void Track(const LoopNest& nest) {
    for (const Access& a : nest.accesses) {
      touched_.insert(a.tensor);
      if (a.write) written_.insert(a.tensor);
    }
  }

  bool Undo(int64_t extent) {
    extent_ = extent;
    return false;
  }

  // Bytes one step of `tile` indices of the group loop touches (each tensor once).
  double StepBytes(const std::vector<Member>& ms, int64_t tile) const {
    std::unordered_map<TensorId, size_t, TensorIdHash> where;
    std::vector<double> lines;  // per tensor, in access order (a sum in a fixed order)
    for (const Member& mb : ms) {
      Box box;
      for (const Loop& l : mb.nest.loops) {
        box.lo.push_back(0);
        box.len.push_back(l.extent);
      }
      box.len[mb.loop] = std::min(tile, extent_);
      for (const Access& a : mb.nest.accesses) {
        auto [it, added] = where.try_emplace(a.tensor, lines.size());
        if (added) lines.push_back(0);
        lines[it->second] = std::max(lines[it->second], ApproxBoxLines(a, box, t_.line_bytes));
      }
    }
    double total = 0;
    for (double l : lines) total += l;
    return total * static_cast<double>(t_.line_bytes);
  }

  // The whole loop or the largest power of two below it whose step touches at most half the
  // scratchpad; 0 when not even one index does.
  int64_t GroupTile(const std::vector<Member>& ms) const {
    const double half = static_cast<double>(t_.scratchpad_bytes) / 2;
    if (StepBytes(ms, extent_) <= half) return extent_;
    int64_t tile = 1;
    while (tile * 2 < extent_) tile *= 2;
    for (; tile >= 1; tile /= 2) {
      if (StepBytes(ms, tile) <= half) return tile;
    }
    return 0;
  }

  void Close() {
    if (members_.empty()) return;
    StageGroup g;
    g.first = members_[0].kernel;
    g.count = members_.size();
    if (members_.size() > 1) {
      g.extent = extent_;
      g.tile = GroupTile(members_);
      std::unordered_map<TensorId, size_t, TensorIdHash> where;
      for (Member& mb : members_) {
        MoveLoopOutermost(mb.nest, mb.loop, g.tile);
        Box whole, step;
        for (const Loop& l : mb.nest.loops) {
          whole.lo.push_back(0);
          whole.len.push_back(l.extent);
        }
        step = whole;
        step.len[0] = g.tile;
        for (const Access& a : mb.nest.accesses) {
          auto [it, added] = where.try_emplace(a.tensor, g.tensors.size());
          if (added) g.tensors.push_back({a.tensor});
          StagedTensor& s = g.tensors[it->second];
          s.written = s.written || a.write;
          s.lines = std::max(s.lines, ApproxBoxLines(a, whole, t_.line_bytes));
          s.step_lines = std::max(s.step_lines, ApproxBoxLines(a, step, t_.line_bytes));
        }
      }
      for (StagedTensor& s : g.tensors) {
        s.internal = s.written && life_.DeadAfter(s.tensor, static_cast<int64_t>(g.last()));
        auto r = rows_.find(s.tensor);
        if (s.internal && r != rows_.end()) s.row_bytes = r->second;
      }
    }
    for (Member& mb : members_) g.nests.push_back(std::move(mb.nest));
    groups_.push_back(std::move(g));
    members_.clear();
    rows_.clear();
    written_.clear();
    touched_.clear();
    extent_ = 0;
  }

  const KernelModel& m_;
  const TensorLifetimes& life_;
  const ScratchpadTarget& t_;
  std::vector<StageGroup> groups_;
  // The group being formed.
  std::vector<Member> members_;
  int64_t extent_ = 0;
  std::unordered_map<TensorId, int64_t, TensorIdHash> rows_;  // written in rows of the group loop: bytes per row
  std::unordered_set<TensorId, TensorIdHash> written_, touched_;
};

}  // namespace

std::vector<StageGroup> PlanStageGroups(const KernelModel& m, const TensorLifetimes& life, const ScratchpadTarget& t) {
  return Planner(m, life, t).Run();
}

std::string StagedTiling(const StageGroup& g, size_t member) {
  return absl::StrCat(g.nests[member].tiling, " staged ", member + 1, "/", g.count, " by ", g.tile, "/", g.extent);
}

}  // namespace hlox::sp
