// convert-mover (XLA's ConvertMover): converts commute with ops that only move data, so a
// widening convert moves down past them and a narrowing one up, and the data movement handles
// the narrow type (fewer bytes), and converts meet where the simplifier can fold them:
//   widen_down:  op(convert_wide(a), convert_wide(b), constant) -> convert_wide(op(a, b, constant'))
//   narrow_up:   convert_narrow(op(a, b))                       -> op(convert_narrow(a), convert_narrow(b))
// op is concatenate, pad, reshape, slice or transpose (XLA's list; dynamic shapes are left
// alone). "Wide" and "narrow" compare bit widths, as XLA does.
//
// As XLA: widen_down needs every operand to be a convert (each used only by op, all from one
// type) or a constant that the narrow type holds exactly (constant' is a convert of it, which
// constant-fold folds); narrow_up needs op to have the convert as its only user. Both exact:
// data movement never does arithmetic. Default: apply.
// Layouts: hlox values are logical row-major arrays and only bitcast reads a layout, so the
// rewrite keeps the anchor's shape (layout included) and gives new intermediates the default
// layout.
#include <cmath>

#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/site_util.h"
#include "passes/xla/rule_pass.h"

namespace hlox {
namespace {

bool CommutesWithConvert(const Instruction& op) {
  switch (op.opcode()) {
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kReshape:
    case Opcode::kSlice:
    case Opcode::kTranspose:
      break;
    default:
      return false;
  }
  if (op.operand_count() == 0 || !IsStaticArray(op.shape()) || !op.control_predecessors().empty()) return false;
  for (const Instruction* x : op.operands()) {
    if (!IsStaticArray(x->shape())) return false;
  }
  return true;
}

bool IsConvert(const Instruction& c) {
  return c.opcode() == Opcode::kConvert && c.operand_count() == 1 && IsStaticArray(c.shape()) &&
         IsStaticArray(c.operand(0)->shape()) && !IsComplex(c.shape().element_type()) &&
         !IsComplex(c.operand(0)->shape().element_type());
}

// True when every element of constant `c` survives a round trip through type `t`.
bool LosslessIn(const Instruction& c, PrimitiveType t) {
  if (!c.has_literal() || c.literal().elided()) return false;
  const Literal& lit = c.literal();
  Literal probe(Shape(t, {}));
  for (int64_t k = 0; k < c.shape().ElementCount(); ++k) {
    const double v = lit.GetAsDouble(k);
    if (std::isnan(v)) {
      if (!IsFloatingPoint(t)) return false;
      continue;
    }
    if (IsFloatingPoint(t)) {
      probe.SetFromDouble(0, v);
      if (probe.GetAsDouble(0) != v) return false;
    } else {
      if (v != std::trunc(v) || std::fabs(v) > 9.0e15) return false;
      probe.SetFromInt64(0, static_cast<int64_t>(v));
      if (static_cast<double>(probe.GetAsInt64(0)) != v) return false;
    }
  }
  return true;
}

// widen_down: the narrow source type of op's converted operands, or nullopt.
std::optional<PrimitiveType> WidenDownType(const Instruction& op) {
  if (!CommutesWithConvert(op)) return std::nullopt;
  std::optional<PrimitiveType> src;
  for (const Instruction* x : op.operands()) {
    if (x->opcode() != Opcode::kConvert) continue;
    if (!IsConvert(*x) || x->user_count() != 1) return std::nullopt;
    const PrimitiveType t = x->operand(0)->shape().element_type();
    if (src.has_value() && *src != t) return std::nullopt;
    src = t;
  }
  if (!src.has_value() || PrimitiveBitWidth(*src) >= PrimitiveBitWidth(op.shape().element_type())) {
    return std::nullopt;
  }
  for (const Instruction* x : op.operands()) {
    if (x->opcode() == Opcode::kConvert) continue;
    if (x->opcode() != Opcode::kConstant || !LosslessIn(*x, *src)) return std::nullopt;
  }
  return src;
}

Instruction* WidenDown(Instruction& op) {
  const PrimitiveType src = *WidenDownType(op);
  std::vector<Instruction*> ops;
  for (Instruction* x : op.operands()) {
    ops.push_back(x->opcode() == Opcode::kConvert
                      ? x->operand(0)
                      : simp::AddNew(op, Opcode::kConvert, simp::ShapeLike(x->shape(), src, x->shape().dims()), {x}));
  }
  std::unique_ptr<Instruction> narrow = op.CloneWithOperands(simp::ShapeLike(op.shape(), src, op.shape().dims()), ops);
  narrow->set_name("");
  Instruction* moved = op.parent()->AddInstruction(std::move(narrow));
  return simp::AddNew(op, Opcode::kConvert, op.shape(), {moved});
}

bool NarrowUpMatch(const Instruction& c) {
  if (!IsConvert(c)) return false;
  const Instruction& op = *c.operand(0);
  return CommutesWithConvert(op) && op.user_count() == 1 && !op.IsRoot() &&
         PrimitiveBitWidth(c.shape().element_type()) < PrimitiveBitWidth(op.shape().element_type());
}

Instruction* NarrowUp(Instruction& c) {
  const Instruction& op = *c.operand(0);
  const PrimitiveType t = c.shape().element_type();
  std::vector<Instruction*> ops;
  for (Instruction* x : op.operands()) {
    ops.push_back(simp::AddNew(c, Opcode::kConvert, simp::ShapeLike(x->shape(), t, x->shape().dims()), {x}));
  }
  std::unique_ptr<Instruction> moved = op.CloneWithOperands(c.shape(), ops);
  moved->set_name("");
  return c.parent()->AddInstruction(std::move(moved));
}

}  // namespace

std::unique_ptr<Pass> CreateConvertMover() {
  xla::Rule down{"widen_down", [](const Instruction& i) { return WidenDownType(i).has_value(); },
                 [](Instruction& i) { return WidenDown(i); }, 1};
  xla::Rule up{"narrow_up", [](const Instruction& i) { return NarrowUpMatch(i); },
               [](Instruction& i) { return NarrowUp(i); }, 1};
  return xla::MakeRulePass("convert-mover", {down, up});
}

}  // namespace hlox
