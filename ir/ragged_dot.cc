// ragged-dot's dimension roles (see ragged_dot.h).
#include "ir/ragged_dot.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace hlox {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

absl::StatusOr<RaggedDotLayout> GetRaggedDotLayout(const Instruction& instr) {
  const Attributes& a = instr.attrs();
  const DotDimensionNumbers d = a.dot.value_or(DotDimensionNumbers{});
  if (instr.operand_count() < 2) return absl::InvalidArgumentError("ragged-dot needs lhs and rhs");
  const int64_t lrank = instr.operand(0)->shape().rank(), rrank = instr.operand(1)->shape().rank();
  if (a.lhs_ragged_dims.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("ragged-dot needs exactly one lhs_ragged_dims, has ", a.lhs_ragged_dims.size()));
  }
  RaggedDotLayout out;
  out.lhs_ragged_dim = a.lhs_ragged_dims[0];
  if (out.lhs_ragged_dim < 0 || out.lhs_ragged_dim >= lrank) {
    return absl::InvalidArgumentError(
        absl::StrCat("ragged-dot lhs_ragged_dims ", out.lhs_ragged_dim, " out of range for rank ", lrank));
  }
  const bool contracting = Contains(d.lhs_contracting, out.lhs_ragged_dim);
  const bool batch = Contains(d.lhs_batch, out.lhs_ragged_dim);
  out.mode = contracting ? RaggedDotMode::kContracting : batch ? RaggedDotMode::kBatch : RaggedDotMode::kNonContracting;
  if (out.mode == RaggedDotMode::kNonContracting) {
    if (a.rhs_group_dims.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ragged-dot with a non-contracting ragged dimension needs exactly one rhs_group_dims, has ",
          a.rhs_group_dims.size()));
    }
    out.rhs_group_dim = a.rhs_group_dims[0];
    if (out.rhs_group_dim < 0 || out.rhs_group_dim >= rrank) {
      return absl::InvalidArgumentError(
          absl::StrCat("ragged-dot rhs_group_dims ", out.rhs_group_dim, " out of range for rank ", rrank));
    }
    if (Contains(d.rhs_batch, out.rhs_group_dim) || Contains(d.rhs_contracting, out.rhs_group_dim)) {
      return absl::InvalidArgumentError("ragged-dot rhs group dimension must be neither batch nor contracting");
    }
  } else if (!a.rhs_group_dims.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("ragged-dot with a ", contracting ? "contracting" : "batch",
                                                   " ragged dimension takes no rhs_group_dims"));
  }
  for (int64_t b : d.lhs_batch) {
    if (b < out.lhs_ragged_dim) out.prefix_dims.push_back(b);
  }
  if (out.mode != RaggedDotMode::kBatch) {
    for (int64_t i = 0; i < out.lhs_ragged_dim; ++i) {
      if (Contains(d.lhs_batch, i)) continue;
      if (Contains(d.lhs_contracting, i) == contracting) out.prefix_dims.push_back(i);
    }
  }
  return out;
}

}  // namespace hlox
