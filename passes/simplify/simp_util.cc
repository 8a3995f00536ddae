// Shared helpers of the simplifier's rules (see simp_util.h).
#include "passes/simplify/simp_util.h"

#include <algorithm>
#include <cmath>

namespace hlox::simp {
namespace {

// The constant behind `i` (itself, or the operand of a broadcast), or nullptr.
const Instruction* ConstantBehind(const Instruction& i) {
  const Instruction* c = &i;
  if (c->opcode() == Opcode::kBroadcast && c->operand_count() == 1) c = c->operand(0);
  if (c->opcode() != Opcode::kConstant || !c->has_literal()) return nullptr;
  const Literal& lit = c->literal();
  if (lit.elided() || !lit.shape().IsArray() || IsComplex(lit.shape().element_type())) return nullptr;
  if (lit.byte_size() < lit.element_count() * PrimitiveByteSize(lit.shape().element_type())) {
    return nullptr;
  }
  return c;
}

}  // namespace

std::optional<double> UniformConstant(const Instruction& i) {
  const Instruction* c = ConstantBehind(i);
  if (!c) return std::nullopt;
  const Literal& lit = c->literal();
  int64_t n = lit.element_count();
  if (n == 0) return std::nullopt;
  PrimitiveType t = lit.shape().element_type();
  if (IsFloatingPoint(t)) {
    double v = lit.GetAsDouble(0);
    for (int64_t k = 1; k < n; ++k) {
      double w = lit.GetAsDouble(k);
      if (!(w == v) || std::signbit(w) != std::signbit(v)) return std::nullopt;
    }
    return v;
  }
  uint64_t v = lit.GetAsUint64(0);
  for (int64_t k = 1; k < n; ++k) {
    if (lit.GetAsUint64(k) != v) return std::nullopt;
  }
  return IsSignedInt(t) ? static_cast<double>(lit.GetAsInt64(0)) : static_cast<double>(v);
}

bool IsConstantValue(const Instruction& i, double v) {
  std::optional<double> u = UniformConstant(i);
  return u.has_value() && *u == v;
}

bool IsAllOnes(const Instruction& i) {
  const Instruction* c = ConstantBehind(i);
  if (!c) return false;
  const Literal& lit = c->literal();
  PrimitiveType t = lit.shape().element_type();
  if (!IsInteger(t) && !IsPred(t)) return false;
  int bits = PrimitiveBitWidth(t);
  uint64_t mask = bits >= 64 ? ~uint64_t{0} : ((uint64_t{1} << bits) - 1);
  if (IsPred(t)) mask = 1;
  if (lit.element_count() == 0) return false;
  for (int64_t k = 0; k < lit.element_count(); ++k) {
    if ((lit.GetAsUint64(k) & mask) != mask) return false;
  }
  return true;
}

bool SameLayoutShape(const Shape& a, const Shape& b) {
  if (!a.IsArray() || !b.IsArray()) return a == b;
  if (a.element_type() != b.element_type() || a.dims() != b.dims()) return false;
  if (a.dynamic_dims() != b.dynamic_dims()) return false;
  if (a.MinorToMajor() != b.MinorToMajor()) return false;
  auto tiles = [](const Shape& s) { return s.has_layout() ? s.layout()->tiles : std::vector<Tile>{}; };
  auto extra = [](const Shape& s) { return s.has_layout() ? LayoutItemsToString(*s.layout()) : std::string(); };
  return tiles(a) == tiles(b) && extra(a) == extra(b);
}

Shape ShapeLike(const Shape& like, PrimitiveType type, std::vector<int64_t> dims) {
  if (like.has_layout()) return Shape::WithDefaultLayout(type, std::move(dims));
  return Shape(type, std::move(dims));
}

Instruction* AddNew(const Instruction& anchor, Opcode opcode, Shape shape,
                    std::vector<Instruction*> operands) {
  return anchor.parent()->AddInstruction(
      Instruction::Create(opcode, std::move(shape), std::move(operands)));
}

Instruction* AddFilled(const Instruction& anchor, const Shape& shape, double v) {
  Literal lit(ShapeLike(shape, shape.element_type(), {}));
  PrimitiveType t = shape.element_type();
  if (IsFloatingPoint(t) || IsComplex(t)) {
    lit.SetFromDouble(0, v);
  } else {
    lit.SetFromInt64(0, static_cast<int64_t>(v));
  }
  Instruction* c = anchor.parent()->AddInstruction(Instruction::CreateConstant(std::move(lit)));
  if (shape.rank() == 0) return c;
  Instruction* b = AddNew(anchor, Opcode::kBroadcast, shape, {c});
  return b;  // dimensions={} (empty): scalar broadcast
}

bool IsIdentityPermutation(const std::vector<int64_t>& perm) {
  for (size_t k = 0; k < perm.size(); ++k) {
    if (perm[k] != static_cast<int64_t>(k)) return false;
  }
  return true;
}

std::vector<int64_t> InversePermutation(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) inv[perm[k]] = static_cast<int64_t>(k);
  return inv;
}

std::vector<int64_t> PermutedDims(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out;
  out.reserve(perm.size());
  for (int64_t p : perm) out.push_back(dims[p]);
  return out;
}

Instruction* AddTranspose(const Instruction& anchor, Instruction* x, const std::vector<int64_t>& perm) {
  const Shape& s = x->shape();
  Instruction* t = AddNew(anchor, Opcode::kTranspose, ShapeLike(s, s.element_type(), PermutedDims(s.dims(), perm)), {x});
  t->attrs().dimensions = perm;
  return t;
}

bool IsPermutation(const std::vector<int64_t>& perm, int64_t n) {
  if (static_cast<int64_t>(perm.size()) != n) return false;
  std::vector<bool> seen(n, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= n || seen[p]) return false;
    seen[p] = true;
  }
  return true;
}

std::optional<Opcode> ReducerOpcode(const Instruction& reduce) {
  if (reduce.called_computations().size() != 1) return std::nullopt;
  const Computation* c = reduce.to_apply();
  if (!c || c->parameter_count() != 2 || !c->root()) return std::nullopt;
  const Instruction* r = c->root();
  if (r->operand_count() != 2 || c->instruction_count() != 3) return std::nullopt;
  const Instruction* p0 = c->parameter(0);
  const Instruction* p1 = c->parameter(1);
  bool params = (r->operand(0) == p0 && r->operand(1) == p1) ||
                (r->operand(0) == p1 && r->operand(1) == p0);
  if (!params) return std::nullopt;
  switch (r->opcode()) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAnd:
    case Opcode::kOr:
      return r->opcode();
    default:
      return std::nullopt;
  }
}

}  // namespace hlox::simp
