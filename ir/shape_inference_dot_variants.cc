// Shape inference for the two dot variants beside dot: ragged-dot (XLA's grouped matmul: one
// lhs dimension is split into groups by a sizes operand) and scaled-dot (a dot of block-scaled
// operands). Both take dot dimension numbers; the result element type is the declared one, as
// for dot.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "ir/ragged_dot.h"
#include "ir/shape_inference.h"

namespace hlox {
namespace {

absl::Status Bad(const std::string& why) { return absl::InvalidArgumentError(why); }

std::string Dims(const std::vector<int64_t>& d) { return absl::StrCat("[", absl::StrJoin(d, ","), "]"); }

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Each listed dimension in [0, rank) and listed once.
absl::Status CheckDims(const std::vector<int64_t>& dims, int64_t rank, const std::string& what) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= rank) {
      return Bad(absl::StrCat(what, " dimension ", dims[i], " out of range for rank ", rank));
    }
    for (size_t j = 0; j < i; ++j) {
      if (dims[j] == dims[i]) return Bad(absl::StrCat(what, " dimension ", dims[i], " repeated"));
    }
  }
  return absl::OkStatus();
}

// The dot checks shared by both variants: dimension lists in range, disjoint per operand,
// paired batch and contracting sizes equal. `op` names the opcode in messages.
absl::Status CheckDotNumbers(const Shape& l, const Shape& r, const DotDimensionNumbers& d, const std::string& op) {
  if (!l.IsArray() || !r.IsArray()) return Bad(op + " lhs and rhs must be arrays");
  HLOX_RETURN_IF_ERROR(CheckDims(d.lhs_batch, l.rank(), op + " lhs batch"));
  HLOX_RETURN_IF_ERROR(CheckDims(d.rhs_batch, r.rank(), op + " rhs batch"));
  HLOX_RETURN_IF_ERROR(CheckDims(d.lhs_contracting, l.rank(), op + " lhs contracting"));
  HLOX_RETURN_IF_ERROR(CheckDims(d.rhs_contracting, r.rank(), op + " rhs contracting"));
  for (int64_t b : d.lhs_batch) {
    if (Contains(d.lhs_contracting, b)) return Bad(absl::StrCat(op, " lhs dimension ", b, " is both batch and contracting"));
  }
  for (int64_t b : d.rhs_batch) {
    if (Contains(d.rhs_contracting, b)) return Bad(absl::StrCat(op, " rhs dimension ", b, " is both batch and contracting"));
  }
  if (d.lhs_batch.size() != d.rhs_batch.size() || d.lhs_contracting.size() != d.rhs_contracting.size()) {
    return Bad(op + " batch/contracting dimension counts differ between lhs and rhs");
  }
  for (size_t i = 0; i < d.lhs_batch.size(); ++i) {
    if (l.dim(d.lhs_batch[i]) != r.dim(d.rhs_batch[i])) return Bad(op + " batch dimension sizes differ");
  }
  for (size_t i = 0; i < d.lhs_contracting.size(); ++i) {
    if (l.dim(d.lhs_contracting[i]) != r.dim(d.rhs_contracting[i])) {
      return Bad(op + " contracting dimension sizes differ");
    }
  }
  return absl::OkStatus();
}

// XLA's dot result dims: batch, lhs free, rhs free; `rhs_skip` (the group dimension) is neither.
std::vector<int64_t> DotResultDims(const Shape& l, const Shape& r, const DotDimensionNumbers& d, int64_t rhs_skip) {
  std::vector<int64_t> dims;
  for (int64_t b : d.lhs_batch) dims.push_back(l.dim(b));
  for (int64_t i = 0; i < l.rank(); ++i) {
    if (!Contains(d.lhs_batch, i) && !Contains(d.lhs_contracting, i)) dims.push_back(l.dim(i));
  }
  for (int64_t i = 0; i < r.rank(); ++i) {
    if (!Contains(d.rhs_batch, i) && !Contains(d.rhs_contracting, i) && i != rhs_skip) dims.push_back(r.dim(i));
  }
  return dims;
}

}  // namespace

absl::StatusOr<Shape> InferRaggedDot(const Instruction& instr) {
  const Shape& l = instr.operand(0)->shape();
  const Shape& r = instr.operand(1)->shape();
  const Shape& g = instr.operand(2)->shape();
  const DotDimensionNumbers d = instr.attrs().dot.value_or(DotDimensionNumbers{});
  HLOX_RETURN_IF_ERROR(CheckDotNumbers(l, r, d, "ragged-dot"));
  HLOX_ASSIGN_OR_RETURN(RaggedDotLayout layout, GetRaggedDotLayout(instr));
  if (!g.IsArray() || !IsInteger(g.element_type())) return Bad("ragged-dot group_sizes must be an integer array");
  int64_t groups = layout.mode == RaggedDotMode::kNonContracting ? r.dim(layout.rhs_group_dim) : -1;
  if (g.rank() < 1) return Bad("ragged-dot group_sizes must have rank >= 1 (the groups last)");
  if (groups < 0) groups = g.dim(g.rank() - 1);
  // group_sizes is [g] (one split for every row) or [prefix dims..., g].
  std::vector<int64_t> want;
  for (int64_t p : layout.prefix_dims) want.push_back(l.dim(p));
  want.push_back(groups);
  if (g.dims() != want && g.dims() != std::vector<int64_t>{groups}) {
    return Bad(absl::StrCat("ragged-dot group_sizes has dims ", Dims(g.dims()), ", expected ", Dims(want),
                            want.size() > 1 ? absl::StrCat(" or [", groups, "]") : std::string()));
  }
  std::vector<int64_t> dims = DotResultDims(l, r, d, layout.rhs_group_dim);
  if (layout.mode == RaggedDotMode::kContracting) dims.insert(dims.begin(), groups);
  return Shape(instr.shape().element_type(), dims);
}

absl::StatusOr<Shape> InferScaledDot(const Instruction& instr) {
  const Shape& l = instr.operand(0)->shape();
  const Shape& r = instr.operand(1)->shape();
  const DotDimensionNumbers d = instr.attrs().dot.value_or(DotDimensionNumbers{});
  HLOX_RETURN_IF_ERROR(CheckDotNumbers(l, r, d, "scaled-dot"));
  // Each scale has its operand's rank; each of its dims divides the operand's (the block size).
  for (int k = 0; k < 2; ++k) {
    const Shape& op = k == 0 ? l : r;
    const Shape& s = instr.operand(2 + k)->shape();
    const char* side = k == 0 ? "lhs" : "rhs";
    if (!s.IsArray() || IsComplex(s.element_type()) || s.element_type() == PrimitiveType::kPred) {
      return Bad(absl::StrCat("scaled-dot ", side, " scale must be a real array"));
    }
    if (s.rank() != op.rank()) {
      return Bad(absl::StrCat("scaled-dot ", side, " scale has rank ", s.rank(), ", its operand ", op.rank()));
    }
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (s.dim(i) == 0 ? op.dim(i) != 0 : op.dim(i) % s.dim(i) != 0) {
        return Bad(absl::StrCat("scaled-dot ", side, " scale dims ", Dims(s.dims()), " do not divide its operand's ",
                                Dims(op.dims())));
      }
    }
  }
  if (IsComplex(l.element_type()) || IsComplex(r.element_type()) || !IsFloatingPoint(instr.shape().element_type())) {
    return Bad("scaled-dot takes real operands and gives a floating-point result");
  }
  return Shape(instr.shape().element_type(), DotResultDims(l, r, d, -1));
}

}  // namespace hlox
