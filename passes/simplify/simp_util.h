// Helpers shared by the simplifier's rule families: recognising constants (also when
// broadcast), comparing shapes with their layouts, and building replacement instructions in
// the anchor's computation with the anchor's layout conventions.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/computation.h"
#include "ir/instruction.h"

namespace hlox::simp {

// True when `i` is a non-elided array constant, or a broadcast of one, whose elements all
// equal `v` (compared as double for floats, as integers for ints and pred; never complex).
bool IsConstantValue(const Instruction& i, double v);
// True when `i` is a constant (or broadcast of one) with every bit set: -1 for signed ints,
// the maximum for unsigned ints, true for pred.
bool IsAllOnes(const Instruction& i);
// The single value of a constant (or broadcast constant) whose elements are all equal, as a
// double; nullopt when elided, empty, complex or not uniform.
std::optional<double> UniformConstant(const Instruction& i);

// Same element type, dimensions and physical layout (absent layout = default row-major).
bool SameLayoutShape(const Shape& a, const Shape& b);
// True when replacing `anchor` by `x` keeps the anchor's shape, layout included.
inline bool CanReplaceWith(const Instruction& anchor, const Instruction& x) {
  return SameLayoutShape(anchor.shape(), x.shape());
}

// Shape for a new intermediate value: given type and dims, with the default layout when
// `like` has a layout (so modules that print layouts keep doing so), else none.
Shape ShapeLike(const Shape& like, PrimitiveType type, std::vector<int64_t> dims);

// Adds a new instruction to `anchor`'s computation and returns it.
Instruction* AddNew(const Instruction& anchor, Opcode opcode, Shape shape,
                    std::vector<Instruction*> operands);
// A value of `shape` whose elements all equal `v` (constant scalar, broadcast unless rank 0).
Instruction* AddFilled(const Instruction& anchor, const Shape& shape, double v);

bool IsIdentityPermutation(const std::vector<int64_t>& perm);
// True when `perm` is a permutation of 0..n-1.
bool IsPermutation(const std::vector<int64_t>& perm, int64_t n);
// The permutation that undoes `perm` (a transpose by it, then by this, is the identity).
std::vector<int64_t> InversePermutation(const std::vector<int64_t>& perm);
// The dimensions of a transpose by `perm` of an array of `dims`: dims[perm[0]], dims[perm[1]], ...
std::vector<int64_t> PermutedDims(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm);
// Adds transpose(x, perm) to `anchor`'s computation (a new intermediate: ShapeLike's layout).
Instruction* AddTranspose(const Instruction& anchor, Instruction* x, const std::vector<int64_t>& perm);
// True when the (single) computation applied by a reduce is `param0 OP param1` (either order)
// for a commutative elementwise binary opcode; returns that opcode.
std::optional<Opcode> ReducerOpcode(const Instruction& reduce);

}  // namespace hlox::simp
