// Tilings of loop nests and the lines a box of loop indices touches (loop_nest.h). Nests are
// built from HLO in loop_nest_build.cc.
#include "cost/loop_nest.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace hlox::sp {
namespace {

// Bytes of one step's data under the nest's current tiles (every access's first box).
int64_t StepBytes(const LoopNest& nest, int64_t line) {
  Box box;
  for (const Loop& l : nest.loops) {
    box.lo.push_back(0);
    box.len.push_back(std::min(l.tile, l.extent));
  }
  double bytes = 0;
  for (const Access& a : nest.accesses) {
    if (!a.opaque) bytes += ApproxBoxLines(a, box, line) * static_cast<double>(line);
  }
  return static_cast<int64_t>(bytes);
}

// The loop order of `order` ("out", "in0", "in1"): loops kept in their natural order within
// two groups, the group that stays (for "out" the output loops, for "inN" the loops operand N
// uses) outside the other.
std::vector<int> OrderOf(const LoopNest& nest, const std::string& order, int* outer_count = nullptr) {
  const int n = static_cast<int>(nest.loops.size());
  std::vector<bool> outer(n, true);
  if (order == "out") {
    for (int j = 0; j < n; ++j) outer[j] = !nest.loops[j].reduction;
  } else {
    const int which = order == "in0" ? 0 : 1;
    int seen = 0;
    const Access* a = nullptr;
    for (const Access& x : nest.accesses) {
      if (!x.write && !x.opaque && seen++ == which) a = &x;
    }
    for (int j = 0; j < n; ++j) outer[j] = a == nullptr ? !nest.loops[j].reduction : a->DependsOn(j);
  }
  std::vector<int> perm;
  for (int j = 0; j < n; ++j) {
    if (outer[j]) perm.push_back(j);
  }
  if (outer_count != nullptr) *outer_count = static_cast<int>(perm.size());
  for (int j = 0; j < n; ++j) {
    if (!outer[j]) perm.push_back(j);
  }
  return perm;
}

void Permute(LoopNest& nest, const std::vector<int>& perm) {
  std::vector<int> where(perm.size());
  std::vector<Loop> loops;
  for (size_t p = 0; p < perm.size(); ++p) {
    where[perm[p]] = static_cast<int>(p);
    loops.push_back(nest.loops[perm[p]]);
  }
  nest.loops = std::move(loops);
  for (Access& a : nest.accesses) {
    for (DimIndex& d : a.index) {
      for (IndexTerm& t : d.terms) t.loop = where[t.loop];
    }
  }
}

// Sizes the tiles for one step's data to stay within `budget` bytes: a loop that walks some
// tensor's contiguous dim starts at a line's worth of it; then the loops of the stationary group
// (the first `outer` loops) grow by doubling, the smallest tile first (square-ish tiles), and
// after them the rest.
void FillTiles(LoopNest& nest, int outer, int64_t budget, int64_t line) {
  for (Loop& l : nest.loops) l.tile = 1;
  for (const Access& a : nest.accesses) {
    if (a.opaque || a.index.empty() || a.index.back().terms.size() != 1) continue;
    const IndexTerm& t = a.index.back().terms[0];
    if (std::abs(t.coeff) != 1) continue;
    Loop& l = nest.loops[t.loop];
    l.tile = std::max(l.tile, std::min(l.extent, std::max<int64_t>(1, line / a.elem_bytes)));
  }
  const int n = static_cast<int>(nest.loops.size());
  for (auto [first, last] : {std::pair<int, int>{0, outer}, std::pair<int, int>{outer, n}}) {
    std::vector<bool> done(n, false);
    while (true) {
      int pick = -1;
      for (int j = last - 1; j >= first; --j) {
        const Loop& l = nest.loops[j];
        if (done[j] || l.tile >= l.extent) continue;
        if (pick < 0 || l.tile < nest.loops[pick].tile) pick = j;
      }
      if (pick < 0) break;
      Loop& l = nest.loops[pick];
      const int64_t old = l.tile;
      l.tile = std::min(l.extent, l.tile * 2);
      if (StepBytes(nest, line) > budget) {
        l.tile = old;
        done[pick] = true;
      }
    }
  }
}

constexpr int64_t kPlanLine = 64;  // the granularity tiles are sized at (any target)

}  // namespace

bool Access::DependsOn(int loop) const {
  for (const DimIndex& d : index) {
    for (const IndexTerm& t : d.terms) {
      if (t.loop == loop && t.coeff != 0) return true;
    }
  }
  return false;
}

std::string BackendKey(const Instruction& instr, std::string_view key) {
  if (!instr.attrs().has_backend_config) return "";
  const std::string& c = instr.attrs().backend_config;
  const std::string quoted = absl::StrCat("\"", absl::string_view(key.data(), key.size()), "\":\"");
  const size_t pos = c.find(quoted);
  if (pos == std::string::npos) return "";
  const size_t start = pos + quoted.size();
  const size_t end = c.find('"', start);
  return end == std::string::npos ? "" : c.substr(start, end - start);
}

void MoveLoopOutermost(LoopNest& nest, int loop, int64_t tile) {
  std::vector<int> perm = {loop};
  for (int j = 0; j < static_cast<int>(nest.loops.size()); ++j) {
    if (j != loop) perm.push_back(j);
  }
  Permute(nest, perm);
  nest.loops[0].tile = std::max<int64_t>(1, std::min(tile, nest.loops[0].extent));
}

const std::vector<std::string>& TilingNames() {
  static const std::vector<std::string> names = {"native", "out_l", "out_s", "in0_l", "in0_s", "in1_l", "in1_s"};
  return names;
}

bool ApplyTiling(LoopNest& nest, const std::string& name, int64_t scratchpad_bytes) {
  const std::vector<std::string>& names = TilingNames();
  const bool known = std::find(names.begin(), names.end(), name) != names.end();
  if (!known || name == "native") {
    Permute(nest, OrderOf(nest, "out"));
    int outs = 0, reds = 0;
    for (int j = static_cast<int>(nest.loops.size()) - 1; j >= 0; --j) {
      Loop& l = nest.loops[j];
      if (l.extent == 1) continue;  // a loop of one iteration is no one's tile
      if (l.reduction) {
        l.tile = reds++ == 0 ? std::min<int64_t>(l.extent, 128) : 1;
      } else {
        l.tile = outs == 0 ? std::min<int64_t>(l.extent, 512) : outs == 1 ? std::min<int64_t>(l.extent, 128) : 1;
        ++outs;
      }
    }
    nest.tiling = "native";
    return known;
  }
  const std::string order = name.substr(0, name.size() - 2);
  int outer = 0;
  Permute(nest, OrderOf(nest, order, &outer));
  const int64_t budget = name.back() == 'l' ? scratchpad_bytes : scratchpad_bytes / 8;
  FillTiles(nest, outer, std::max<int64_t>(kPlanLine, budget), kPlanLine);
  nest.tiling = name;
  return true;
}

std::string DescribeTiles(const LoopNest& nest) {
  std::string out;
  for (const Loop& l : nest.loops) {
    absl::StrAppend(&out, out.empty() ? "" : " ", l.reduction ? "r" : "", l.tile, "/", l.extent);
  }
  return out;
}

// ---- boxes ----

std::vector<int64_t> DimValues(const Access& a, int d, const Box& box) {
  const DimIndex& di = a.index[d];
  const int64_t dim = a.dims[d];
  int64_t lo = di.offset, hi = di.offset;  // the range of the affine form over the box
  for (const IndexTerm& t : di.terms) {
    const int64_t x0 = box.lo[t.loop], x1 = box.lo[t.loop] + box.len[t.loop] - 1;
    lo += std::min(t.coeff * x0, t.coeff * x1);
    hi += std::max(t.coeff * x0, t.coeff * x1);
  }
  std::vector<int64_t> out;
  if (hi < 0 || lo >= dim) return out;
  // One term (or none): an arithmetic progression. Several: enumerate (convolution windows).
  if (di.terms.size() <= 1) {
    const int64_t step = di.terms.empty() ? 1 : std::max<int64_t>(1, std::abs(di.terms[0].coeff));
    const int64_t count = di.terms.empty() ? 1 : box.len[di.terms[0].loop];
    for (int64_t k = 0; k < count; ++k) {
      const int64_t v = lo + k * step;
      if (v >= 0 && v < dim) out.push_back(v);
    }
    return out;
  }
  std::vector<char> hit(static_cast<size_t>(std::min(hi, dim - 1) - std::max<int64_t>(lo, 0) + 1), 0);
  const int64_t base = std::max<int64_t>(lo, 0);
  // Odometer over the terms' ranges.
  std::vector<int64_t> x(di.terms.size(), 0);
  while (true) {
    int64_t v = di.offset;
    for (size_t t = 0; t < di.terms.size(); ++t) v += di.terms[t].coeff * (box.lo[di.terms[t].loop] + x[t]);
    if (v >= 0 && v < dim) hit[v - base] = 1;
    size_t t = 0;
    for (; t < x.size(); ++t) {
      if (++x[t] < box.len[di.terms[t].loop]) break;
      x[t] = 0;
    }
    if (t == x.size()) break;
  }
  for (size_t v = 0; v < hit.size(); ++v) {
    if (hit[v]) out.push_back(base + static_cast<int64_t>(v));
  }
  return out;
}

void BoxLineRuns(const Access& a, const Box& box, int64_t line, std::vector<std::pair<int64_t, int64_t>>* runs) {
  runs->clear();
  if (a.opaque) {
    if (a.opaque_bytes > 0) runs->push_back({0, (a.opaque_bytes - 1) / line});
    return;
  }
  const int r = static_cast<int>(a.dims.size());
  if (r == 0) {
    runs->push_back({0, 0});
    return;
  }
  std::vector<std::vector<int64_t>> vals(r);
  for (int d = 0; d < r; ++d) {
    vals[d] = DimValues(a, d, box);
    if (vals[d].empty()) return;
  }
  std::vector<int64_t> stride(r, a.elem_bytes);
  for (int d = r - 2; d >= 0; --d) stride[d] = stride[d + 1] * a.dims[d + 1];
  // Innermost dim: contiguous pieces of its values.
  std::vector<std::pair<int64_t, int64_t>> inner;  // byte ranges [first, last] within a row
  const std::vector<int64_t>& iv = vals[r - 1];
  for (size_t k = 0; k < iv.size();) {
    size_t e = k;
    while (e + 1 < iv.size() && iv[e + 1] == iv[e] + 1) ++e;
    inner.push_back({iv[k] * a.elem_bytes, iv[e] * a.elem_bytes + a.elem_bytes - 1});
    k = e + 1;
  }
  // Odometer over the outer dims, in ascending address order.
  std::vector<size_t> x(r - 1, 0);
  while (true) {
    int64_t row = 0;
    for (int d = 0; d < r - 1; ++d) row += vals[d][x[d]] * stride[d];
    for (const auto& [b0, b1] : inner) {
      const int64_t l0 = (row + b0) / line, l1 = (row + b1) / line;
      if (!runs->empty() && l0 <= runs->back().second + 1) {
        runs->back().second = std::max(runs->back().second, l1);
      } else {
        runs->push_back({l0, l1});
      }
    }
    int d = r - 2;
    for (; d >= 0; --d) {
      if (++x[d] < vals[d].size()) break;
      x[d] = 0;
    }
    if (d < 0) break;
  }
}

namespace {

// Count, first value and spacing of a view dim's index values over a box (closed form).
struct DimSpan {
  int64_t count = 0, first = 0;
  double spacing = 1;
};

DimSpan SpanOf(const DimIndex& di, int64_t dim, const Box& box) {
  DimSpan s;
  int64_t lo = di.offset, hi = di.offset;
  for (const IndexTerm& t : di.terms) {
    const int64_t x0 = box.lo[t.loop], x1 = box.lo[t.loop] + box.len[t.loop] - 1;
    lo += std::min(t.coeff * x0, t.coeff * x1);
    hi += std::max(t.coeff * x0, t.coeff * x1);
  }
  if (hi < 0 || lo >= dim) return s;
  if (di.terms.size() <= 1) {
    const int64_t c = di.terms.empty() ? 1 : std::max<int64_t>(1, std::abs(di.terms[0].coeff));
    const int64_t len = di.terms.empty() ? 1 : box.len[di.terms[0].loop];
    const int64_t kmin = lo >= 0 ? 0 : (-lo + c - 1) / c;
    const int64_t kmax = std::min(len - 1, (dim - 1 - lo) / c);
    if (kmax < kmin) return s;
    s.count = kmax - kmin + 1;
    s.first = lo + kmin * c;
    s.spacing = static_cast<double>(c);
    return s;
  }
  // Several terms: dense when, in ascending |coeff|, each term's step is covered by the range of
  // the smaller ones.
  std::vector<std::pair<int64_t, int64_t>> ts;  // |coeff|, length
  for (const IndexTerm& t : di.terms) ts.push_back({std::abs(t.coeff), box.len[t.loop]});
  std::sort(ts.begin(), ts.end());
  bool dense = ts[0].first == 1;
  int64_t covered = ts[0].second - 1;
  int64_t product = ts[0].second;
  for (size_t k = 1; k < ts.size(); ++k) {
    if (ts[k].second > 1 && ts[k].first > covered + 1) dense = false;
    covered += ts[k].first * (ts[k].second - 1);
    product *= ts[k].second;
  }
  const int64_t a = std::max<int64_t>(lo, 0), b = std::min(hi, dim - 1);
  s.first = a;
  s.count = dense ? b - a + 1 : std::min(b - a + 1, product);
  s.spacing = s.count > 1 ? static_cast<double>(b - a) / static_cast<double>(s.count - 1) : 1;
  return s;
}

// Lines a run of `span` bytes starting `start` bytes into a line touches.
int64_t LinesOfSpan(int64_t start, int64_t span, int64_t line) {
  const int64_t s = ((start % line) + line) % line;
  return (s + span - 1) / line + 1;
}

}  // namespace

double ApproxBoxLines(const Access& a, const Box& box, int64_t line) {
  if (a.opaque) return a.opaque_bytes > 0 ? static_cast<double>((a.opaque_bytes - 1) / line + 1) : 0;
  const int r = static_cast<int>(a.dims.size());
  if (r == 0) return 1;
  std::vector<DimSpan> spans(r);
  for (int d = 0; d < r; ++d) {
    spans[d] = SpanOf(a.index[d], a.dims[d], box);
    if (spans[d].count == 0) return 0;
  }
  std::vector<int64_t> stride(r, a.elem_bytes);
  for (int d = r - 2; d >= 0; --d) stride[d] = stride[d + 1] * a.dims[d + 1];
  int64_t start = 0;  // byte offset of the first touched element
  for (int d = 0; d < r; ++d) start += spans[d].first * stride[d];
  // The innermost dim: one group.
  const DimSpan& in = spans[r - 1];
  const double in_step = in.spacing * static_cast<double>(a.elem_bytes);
  int64_t span = static_cast<int64_t>(std::llround(static_cast<double>(in.count - 1) * in_step)) + a.elem_bytes;
  if (in.count > 1 && in_step >= static_cast<double>(line) + 0.5 * a.elem_bytes) {
    // Sparse: every element on its own line.
    double lines = static_cast<double>(in.count);
    for (int d = r - 2; d >= 0; --d) lines *= static_cast<double>(spans[d].count);
    return lines;
  }
  // Dense groups merge outward while no whole line fits between them; after that they are
  // separate, each touching LinesOfSpan at its own offset within a line: a histogram of those
  // offsets (weights: groups) is carried outward.
  int d = r - 2;
  for (; d >= 0; --d) {
    const DimSpan& o = spans[d];
    if (o.count <= 1) continue;
    const int64_t step = static_cast<int64_t>(std::llround(o.spacing * static_cast<double>(stride[d])));
    if (step - span >= line) break;
    span += (o.count - 1) * step;
  }
  std::vector<double> hist(static_cast<size_t>(line), 0);
  hist[static_cast<size_t>(((start % line) + line) % line)] = 1;
  for (; d >= 0; --d) {
    const DimSpan& o = spans[d];
    if (o.count <= 1) continue;
    const int64_t step = static_cast<int64_t>(std::llround(o.spacing * static_cast<double>(stride[d])));
    const int64_t shift = ((step % line) + line) % line;
    if (shift == 0) {
      for (double& h : hist) h *= static_cast<double>(o.count);
      continue;
    }
    const int64_t period = line / std::gcd(shift, line);
    const int64_t reps = o.count / period, extra = o.count % period;
    std::vector<double> next(hist.size(), 0);
    for (int64_t res = 0; res < line; ++res) {
      if (hist[res] == 0) continue;
      for (int64_t k = 0; k < std::min(period, o.count); ++k) {
        const double w = static_cast<double>(reps + (k < extra ? 1 : 0));
        next[(res + k * shift) % line] += hist[res] * w;
      }
    }
    hist = std::move(next);
  }
  double lines = 0;
  for (int64_t res = 0; res < line; ++res) {
    if (hist[res] != 0) lines += hist[res] * static_cast<double>(LinesOfSpan(res, span, line));
  }
  return lines;
}

int64_t BoxLines(const Access& a, const Box& box, int64_t line) {
  std::vector<std::pair<int64_t, int64_t>> runs;
  BoxLineRuns(a, box, line, &runs);
  int64_t n = 0;
  for (const auto& [l0, l1] : runs) n += l1 - l0 + 1;
  return n;
}

}  // namespace hlox::sp
