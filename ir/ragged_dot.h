// ragged-dot's dimension roles, read once from its attributes for shape inference and the
// runtime kernel. XLA's three modes follow from where the lhs ragged dimension sits:
//   non-contracting (lhs [m,k], rhs [g,k,n] -> [m,n]): rows of m are split into g groups and
//     group i's rows multiply rhs[i] (rhs_group_dims names the g dimension);
//   contracting (lhs [m,k], rhs [k,n] -> [g,m,n]): k is split and result i sums group i only;
//   batch (ragged batch dimension): a plain batched dot over the rows that lie in a group.
// group_sizes is [g], or [prefix..., g] with one split per index of the prefix dims: the lhs
// batch dimensions and the lhs dimensions of the ragged one's kind (free or contracting) that
// come before it.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/instruction.h"

namespace hlox {

enum class RaggedDotMode : uint8_t { kNonContracting, kContracting, kBatch };

struct RaggedDotLayout {
  RaggedDotMode mode = RaggedDotMode::kNonContracting;
  int64_t lhs_ragged_dim = 0;
  int64_t rhs_group_dim = -1;         // non-contracting mode only; -1 otherwise
  std::vector<int64_t> prefix_dims;   // lhs dims indexing group_sizes' leading dims, in order
};

// The layout of a ragged-dot (operands 0 and 1 give the ranks); InvalidArgument when
// lhs_ragged_dims is not one dimension of lhs, or rhs_group_dims is not exactly one free rhs
// dimension in non-contracting mode and empty in the other modes.
absl::StatusOr<RaggedDotLayout> GetRaggedDotLayout(const Instruction& instr);

}  // namespace hlox
