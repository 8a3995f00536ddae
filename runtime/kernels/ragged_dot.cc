// ragged-dot: XLA's grouped matmul (modes in ir/ragged_dot.h). The group sizes are data, so
// the kernel reads them at run time: group i covers rows [start_i, start_i + size_i) of the
// ragged dimension, the starts being running sums of the sizes (per index of the prefix
// dimensions when group_sizes has them). As in XLA, rows past the last group contribute
// nothing (zero result rows in non-contracting and batch modes); a group running past the end
// of the dimension is cut there. A negative group size is a run error.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ir/ragged_dot.h"
#include "runtime/core/kernel.h"
#include "runtime/core/kernel_util.h"
#include "runtime/kernels/dot_variants.h"
#include "runtime/kernels/scalar_access.h"

namespace hlox::rt {
namespace {

constexpr int64_t kGrain = 256;

// Group boundaries: bounds[p * (groups + 1) + i] is group i's first row for prefix index p.
struct GroupBounds {
  int64_t groups = 0;
  std::vector<int64_t> bounds;
  // The group holding row r for prefix index p, or -1 when r lies past the last group.
  int64_t GroupOf(int64_t p, int64_t r) const {
    const int64_t* b = bounds.data() + p * (groups + 1);
    if (r >= b[groups]) return -1;
    return static_cast<int64_t>(std::upper_bound(b, b + groups + 1, r) - b) - 1;
  }
  bool InGroup(int64_t p, int64_t g, int64_t r) const {
    const int64_t* b = bounds.data() + p * (groups + 1);
    return r >= b[g] && r < b[g + 1];
  }
};

absl::StatusOr<GroupBounds> ReadGroups(const Instruction& instr, const Buffer& sizes, int64_t rows) {
  const Shape& s = sizes.shape();
  if (PrimitiveBitWidth(s.element_type()) < 8) return KernelError(instr, "group_sizes must be 8 bits or wider");
  GroupBounds gb;
  gb.groups = s.dim(s.rank() - 1);
  const int64_t prefixes = gb.groups == 0 ? 0 : sizes.element_count() / gb.groups;
  gb.bounds.assign(std::max<int64_t>(prefixes, 1) * (gb.groups + 1), 0);
  for (int64_t p = 0; p < prefixes; ++p) {
    int64_t start = 0;
    for (int64_t g = 0; g < gb.groups; ++g) {
      const int64_t n = ReadIndex(sizes, p * gb.groups + g);
      if (n < 0) return KernelError(instr, absl::StrCat("group size ", n, " is negative"));
      start = std::min(rows, start + std::min(n, rows));
      gb.bounds[p * (gb.groups + 1) + g + 1] = start;
    }
  }
  return gb;
}

// The dims, strides and position in `plan`'s output (or contraction) of each prefix dimension.
struct PrefixMap {
  std::vector<int64_t> out_pos, k_pos;  // output dim or contracting slot of each prefix dim (or -1)
  std::vector<int64_t> stride;          // its stride over group_sizes' prefix rows (0 when [g])
};

template <typename Acc>
absl::Status Run(const Instruction& instr, const RaggedDotLayout& lay, const std::vector<Acc>& l,
                 const std::vector<Acc>& r, const GroupBounds& gb, const DotIndexPlan& plan,
                 const PrefixMap& pm, std::vector<Acc>& out, KernelContext& ctx) {
  const DotDimensionNumbers d = instr.attrs().dot.value_or(DotDimensionNumbers{});
  const std::vector<int64_t> rstrides = RowMajorStrides(instr.operand(1)->shape().dims());
  const int64_t k_count = static_cast<int64_t>(plan.lhs_k.size());
  // Contracting mode: each contraction step's ragged row and its part of the prefix index.
  std::vector<int64_t> k_row(k_count, 0), k_prefix(k_count, 0);
  int64_t ragged_out = -1, ragged_k = -1;
  for (size_t j = 0; j < plan.out_lhs_dim.size(); ++j) {
    if (plan.out_lhs_dim[j] == lay.lhs_ragged_dim) ragged_out = static_cast<int64_t>(j);
  }
  for (size_t j = 0; j < d.lhs_contracting.size(); ++j) {
    if (d.lhs_contracting[j] == lay.lhs_ragged_dim) ragged_k = static_cast<int64_t>(j);
  }
  if (lay.mode == RaggedDotMode::kContracting) {
    std::vector<int64_t> idx(plan.k_dims.size(), 0);
    for (int64_t k = 0; k < k_count; ++k) {
      k_row[k] = idx[ragged_k];
      for (size_t q = 0; q < pm.k_pos.size(); ++q) {
        if (pm.k_pos[q] >= 0) k_prefix[k] += idx[pm.k_pos[q]] * pm.stride[q];
      }
      NextIndex(idx, plan.k_dims);
    }
  }
  const int64_t per_group = plan.out_count;  // contracting mode: one dot result per group
  KernelParallelFor(ctx, static_cast<int64_t>(out.size()), kGrain, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> coords;
    for (int64_t e = begin; e < end; ++e) {
      const int64_t g_out = lay.mode == RaggedDotMode::kContracting ? e / per_group : 0;
      int64_t lb = 0, rb = 0;
      DotOutputBases(plan, lay.mode == RaggedDotMode::kContracting ? e % per_group : e, &lb, &rb, &coords);
      int64_t prefix = 0;
      for (size_t q = 0; q < pm.out_pos.size(); ++q) {
        if (pm.out_pos[q] >= 0) prefix += coords[pm.out_pos[q]] * pm.stride[q];
      }
      Acc acc{};
      if (lay.mode == RaggedDotMode::kContracting) {
        for (int64_t k = 0; k < k_count; ++k) {
          if (gb.InGroup(prefix + k_prefix[k], g_out, k_row[k])) acc += l[lb + plan.lhs_k[k]] * r[rb + plan.rhs_k[k]];
        }
      } else {
        const int64_t g = gb.GroupOf(prefix, coords[ragged_out]);
        if (g >= 0) {
          if (lay.mode == RaggedDotMode::kNonContracting) rb += g * rstrides[lay.rhs_group_dim];
          for (int64_t k = 0; k < k_count; ++k) acc += l[lb + plan.lhs_k[k]] * r[rb + plan.rhs_k[k]];
        }
      }
      out[e] = acc;
    }
  });
  return absl::OkStatus();
}

template <typename Acc, typename LoadFn, typename StoreFn>
absl::StatusOr<Value> Compute(const Instruction& instr, const RaggedDotLayout& lay, const Buffer& lhs,
                              const Buffer& rhs, const GroupBounds& gb, const PrefixMap& pm, KernelContext& ctx,
                              LoadFn load, StoreFn store) {
  auto l = load(lhs);
  if (!l.ok()) return KernelError(instr, std::string(l.status().message()));
  auto r = load(rhs);
  if (!r.ok()) return KernelError(instr, std::string(r.status().message()));
  const DotDimensionNumbers d = instr.attrs().dot.value_or(DotDimensionNumbers{});
  const DotIndexPlan plan = MakeDotIndexPlan(lhs.shape().dims(), rhs.shape().dims(), d, lay.rhs_group_dim);
  Value out = NewArray(instr.shape());
  std::vector<Acc> o(out.array->element_count());
  HLOX_RETURN_IF_ERROR(Run<Acc>(instr, lay, *l, *r, gb, plan, pm, o, ctx));
  store(o, *out.array);
  return out;
}

}  // namespace

absl::StatusOr<Value> RaggedDotKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                      KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* lhs, ArrayOperand(instr, operands, 0));
  HLOX_ASSIGN_OR_RETURN(const Buffer* rhs, ArrayOperand(instr, operands, 1));
  HLOX_ASSIGN_OR_RETURN(const Buffer* sizes, ArrayOperand(instr, operands, 2));
  HLOX_RETURN_IF_ERROR(CheckVerifiedShape(instr));
  absl::StatusOr<RaggedDotLayout> lay = GetRaggedDotLayout(instr);
  if (!lay.ok()) return KernelError(instr, std::string(lay.status().message()));
  if (!instr.shape().IsArray() || sizes->shape().rank() < 1) return KernelError(instr, "malformed ragged-dot");
  HLOX_ASSIGN_OR_RETURN(GroupBounds gb, ReadGroups(instr, *sizes, lhs->shape().dim(lay->lhs_ragged_dim)));
  // Where each prefix dimension sits in the output index (batch and free dims) or in the
  // contraction index (contracting dims); strides over group_sizes' leading dims.
  const DotDimensionNumbers d = instr.attrs().dot.value_or(DotDimensionNumbers{});
  const DotIndexPlan probe = MakeDotIndexPlan(lhs->shape().dims(), rhs->shape().dims(), d, lay->rhs_group_dim);
  PrefixMap pm;
  const bool per_prefix = sizes->shape().rank() > 1;
  // Strides in prefix rows (group_sizes' dims without the last, groups, one).
  std::vector<int64_t> prefix_sizes = sizes->shape().dims();
  prefix_sizes.pop_back();
  const std::vector<int64_t> gstrides = RowMajorStrides(prefix_sizes);
  for (size_t q = 0; q < lay->prefix_dims.size(); ++q) {
    const int64_t dim = lay->prefix_dims[q];
    const auto out_it = std::find(probe.out_lhs_dim.begin(), probe.out_lhs_dim.end(), dim);
    const auto k_it = std::find(d.lhs_contracting.begin(), d.lhs_contracting.end(), dim);
    pm.out_pos.push_back(out_it == probe.out_lhs_dim.end() ? -1 : out_it - probe.out_lhs_dim.begin());
    pm.k_pos.push_back(k_it == d.lhs_contracting.end() ? -1 : k_it - d.lhs_contracting.begin());
    pm.stride.push_back(per_prefix ? gstrides[q] : 0);
  }
  const PrimitiveType t = instr.shape().element_type();
  if (IsComplex(t)) {
    return Compute<std::complex<double>>(instr, *lay, *lhs, *rhs, gb, pm, ctx, LoadComplexes, StoreComplexes);
  }
  if (IsInteger(t)) {
    if (PrimitiveBitWidth(t) < 8) return KernelError(instr, "sub-byte integer results are not supported");
    return Compute<uint64_t>(instr, *lay, *lhs, *rhs, gb, pm, ctx, LoadIntegers, StoreIntegers);
  }
  if (t == PrimitiveType::kPred) return KernelError(instr, "a pred result is not supported");
  return Compute<double>(instr, *lay, *lhs, *rhs, gb, pm, ctx, LoadReals, StoreReals);
}

}  // namespace hlox::rt
