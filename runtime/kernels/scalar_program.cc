// Scalar computation interpreter (see kernels/scalar_program.h).
#include "runtime/kernels/scalar_program.h"

#include <bit>
#include <cmath>
#include <unordered_map>

#include "ir/literal.h"
#include "ir/small_float.h"
#include "runtime/core/small_float_widen.h"

namespace hlox::rt {
namespace {

bool IsFloat(PrimitiveType t) {
  return t == PrimitiveType::kF16 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF32 ||
         t == PrimitiveType::kF64 || IsSmallFloat(t);
}

bool Supported(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred: case PrimitiveType::kS8: case PrimitiveType::kS16:
    case PrimitiveType::kS32: case PrimitiveType::kS64: case PrimitiveType::kU8:
    case PrimitiveType::kU16: case PrimitiveType::kU32: case PrimitiveType::kU64:
    case PrimitiveType::kF16: case PrimitiveType::kBF16: case PrimitiveType::kF32:
    case PrimitiveType::kF64:
      return true;
    default:
      return IsSmallFloat(t);
  }
}

double RoundTo(PrimitiveType t, double v) {
  switch (t) {
    case PrimitiveType::kF16: return HalfToFloat(FloatToHalf(static_cast<float>(v)));
    case PrimitiveType::kBF16: return Bf16ToFloat(FloatToBf16(static_cast<float>(v)));
    case PrimitiveType::kF32: return static_cast<float>(v);
    default: return IsSmallFloat(t) ? SmallFloatToFloat(t, SmallFloatConvert(t, v)) : v;
  }
}

int64_t WrapInt(PrimitiveType t, int64_t v) {
  switch (t) {
    case PrimitiveType::kPred: return v != 0 ? 1 : 0;
    case PrimitiveType::kS8: return static_cast<int8_t>(v);
    case PrimitiveType::kS16: return static_cast<int16_t>(v);
    case PrimitiveType::kS32: return static_cast<int32_t>(v);
    case PrimitiveType::kU8: return static_cast<uint8_t>(v);
    case PrimitiveType::kU16: return static_cast<uint16_t>(v);
    case PrimitiveType::kU32: return static_cast<uint32_t>(v);
    default: return v;
  }
}

uint64_t RawBits(PrimitiveType t, const SVal& v) {
  switch (t) {
    case PrimitiveType::kF64: return std::bit_cast<uint64_t>(v.f);
    case PrimitiveType::kF32: return std::bit_cast<uint32_t>(static_cast<float>(v.f));
    case PrimitiveType::kF16: return FloatToHalf(static_cast<float>(v.f));
    case PrimitiveType::kBF16: return FloatToBf16(static_cast<float>(v.f));
    default: return IsSmallFloat(t) ? SmallFloatConvert(t, v.f) : static_cast<uint64_t>(v.i);
  }
}

SVal FromBits(PrimitiveType t, uint64_t bits) {
  SVal r;
  switch (t) {
    case PrimitiveType::kF64: r.f = std::bit_cast<double>(bits); break;
    case PrimitiveType::kF32: r.f = std::bit_cast<float>(static_cast<uint32_t>(bits)); break;
    case PrimitiveType::kF16: r.f = HalfToFloat(static_cast<uint16_t>(bits)); break;
    case PrimitiveType::kBF16: r.f = Bf16ToFloat(static_cast<uint16_t>(bits)); break;
    default:
      if (IsSmallFloat(t)) r.f = SmallFloatToFloat(t, static_cast<uint8_t>(bits));
      else r.i = WrapInt(t, static_cast<int64_t>(bits));
      break;
  }
  return r;
}

bool IsUnsigned(PrimitiveType t) { return IsUnsignedInt(t) || t == PrimitiveType::kPred; }

// Total order key of a float: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
int64_t TotalKey(double f) {
  int64_t b = std::bit_cast<int64_t>(f);
  return b < 0 ? (b ^ INT64_MAX) : b;
}

template <typename T>
bool Cmp(ComparisonDirection d, T a, T b) {
  switch (d) {
    case ComparisonDirection::kEq: return a == b;
    case ComparisonDirection::kNe: return a != b;
    case ComparisonDirection::kGe: return a >= b;
    case ComparisonDirection::kGt: return a > b;
    case ComparisonDirection::kLe: return a <= b;
    case ComparisonDirection::kLt: return a < b;
  }
  return false;
}

}  // namespace

SVal LoadSVal(const Buffer& b, int64_t i) {
  SVal v;
  switch (b.shape().element_type()) {
    case PrimitiveType::kPred: v.i = b.as<uint8_t>()[i] != 0; break;
    case PrimitiveType::kS8: v.i = b.as<int8_t>()[i]; break;
    case PrimitiveType::kS16: v.i = b.as<int16_t>()[i]; break;
    case PrimitiveType::kS32: v.i = b.as<int32_t>()[i]; break;
    case PrimitiveType::kS64: v.i = b.as<int64_t>()[i]; break;
    case PrimitiveType::kU8: v.i = b.as<uint8_t>()[i]; break;
    case PrimitiveType::kU16: v.i = b.as<uint16_t>()[i]; break;
    case PrimitiveType::kU32: v.i = b.as<uint32_t>()[i]; break;
    case PrimitiveType::kU64: v.i = static_cast<int64_t>(b.as<uint64_t>()[i]); break;
    case PrimitiveType::kF16: v.f = HalfToFloat(b.as<uint16_t>()[i]); break;
    case PrimitiveType::kBF16: v.f = Bf16ToFloat(b.as<uint16_t>()[i]); break;
    case PrimitiveType::kF32: v.f = b.as<float>()[i]; break;
    case PrimitiveType::kF64: v.f = b.as<double>()[i]; break;
    default:
      if (IsSmallFloat(b.shape().element_type())) v.f = SmallFloatToFloat(b.shape().element_type(), b.data()[i]);
      break;
  }
  return v;
}

void StoreSVal(Buffer& b, int64_t i, const SVal& v) {
  const PrimitiveType t = b.shape().element_type();
  const uint64_t bits = RawBits(t, v);
  const int64_t sz = PrimitiveByteSize(t);
  std::memcpy(b.data() + i * sz, &bits, sz);  // little-endian: low bytes first
}

namespace {

// A value while compiling: the node of each scalar leaf (one for a scalar, one per element of
// a tuple of scalars).
using Leaves = std::vector<int>;

bool ScalarShape(const Shape& s) {
  return s.IsArray() && s.rank() == 0 && Supported(s.element_type());
}
bool ScalarTupleShape(const Shape& s) {
  if (!s.IsTuple()) return false;
  for (const Shape& e : s.tuple_shapes()) {
    if (!ScalarShape(e)) return false;
  }
  return true;
}

}  // namespace

// Compiles `comp` into the program's nodes with `args` as its parameters (the leaves of the
// caller's operands; empty at the top level, where parameters become parameter nodes); the
// result's leaves, or nullopt when something is outside the interpreter. Fusions and calls of
// scalar computations are inlined, tuples and get-tuple-element only rename leaves.
std::optional<std::vector<int>> ScalarProgram::CompileInto(const Computation& comp, const std::vector<Leaves>* args,
                                                           int depth) {
  if (depth > 8 || comp.root() == nullptr) return std::nullopt;
  std::unordered_map<const Instruction*, Leaves> index;
  for (const Instruction* instr : comp.PostOrder()) {
    const Opcode op = instr->opcode();
    Leaves in;  // the operands' leaves, in order
    for (const Instruction* o : instr->operands()) {
      const Leaves& l = index.at(o);
      in.insert(in.end(), l.begin(), l.end());
    }
    if (op == Opcode::kTuple) {
      if (!ScalarTupleShape(instr->shape())) return std::nullopt;
      index[instr] = in;
      continue;
    }
    if (op == Opcode::kGetTupleElement) {
      const Leaves& t = index.at(instr->operand(0));
      const int64_t k = instr->tuple_index();
      if (!ScalarShape(instr->shape()) || k < 0 || k >= static_cast<int64_t>(t.size())) return std::nullopt;
      index[instr] = {t[k]};
      continue;
    }
    if (op == Opcode::kFusion || op == Opcode::kCall) {
      const Computation* callee = instr->to_apply();
      if (callee == nullptr || !(ScalarShape(instr->shape()) || ScalarTupleShape(instr->shape()))) return std::nullopt;
      std::vector<Leaves> callee_args;
      for (const Instruction* o : instr->operands()) {
        if (!ScalarShape(o->shape())) return std::nullopt;
        callee_args.push_back(index.at(o));
      }
      std::optional<Leaves> out = CompileInto(*callee, &callee_args, depth + 1);
      if (!out.has_value()) return std::nullopt;
      index[instr] = *std::move(out);
      continue;
    }
    if (op == Opcode::kParameter && args != nullptr) {
      const int64_t k = instr->parameter_number();
      if (k < 0 || k >= static_cast<int64_t>(args->size())) return std::nullopt;
      index[instr] = (*args)[k];
      continue;
    }
    if (!ScalarShape(instr->shape())) return std::nullopt;
    for (const Instruction* o : instr->operands()) {
      if (!ScalarShape(o->shape())) return std::nullopt;
    }
    Node n;
    n.op = op;
    n.type = instr->shape().element_type();
    n.in_type = instr->operand_count() > 0 ? instr->operand(0)->shape().element_type() : n.type;
    auto opnd = [&](int k) { return in[k]; };
    switch (n.op) {
      case Opcode::kParameter: n.param = static_cast<int>(instr->parameter_number()); break;
      case Opcode::kConstant:
        if (!instr->has_literal() || instr->literal().elided()) return std::nullopt;
        if (IsFloat(n.type)) n.constant.f = instr->literal().GetAsDouble(0);
        else n.constant.i = WrapInt(n.type, instr->literal().GetAsInt64(0));
        break;
      case Opcode::kCompare:
        if (!instr->attrs().comparison.has_value()) return std::nullopt;
        n.dir = *instr->attrs().comparison;
        n.total_order = instr->attrs().comparison_type == "TOTALORDER";
        n.a = opnd(0); n.b = opnd(1);
        break;
      case Opcode::kSelect: case Opcode::kClamp:
        n.a = opnd(0); n.b = opnd(1); n.c = opnd(2);
        break;
      case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
      case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kAnd: case Opcode::kOr:
      case Opcode::kXor:
        n.a = opnd(0); n.b = opnd(1);
        break;
      case Opcode::kNegate: case Opcode::kAbs: case Opcode::kNot: case Opcode::kConvert:
      case Opcode::kBitcastConvert: case Opcode::kCopy: case Opcode::kIsFinite:
        if (n.op == Opcode::kBitcastConvert && PrimitiveByteSize(n.type) != PrimitiveByteSize(n.in_type)) return std::nullopt;
        n.a = opnd(0);
        break;
      default:
        return std::nullopt;
    }
    index[instr] = {static_cast<int>(nodes_.size())};
    nodes_.push_back(n);
  }
  auto it = index.find(comp.root());
  if (it == index.end()) return std::nullopt;
  return it->second;
}

std::optional<ScalarProgram> ScalarProgram::Compile(const Computation& comp) {
  ScalarProgram p;
  std::optional<std::vector<int>> out = p.CompileInto(comp, nullptr, 0);
  if (!out.has_value() || out->empty()) return std::nullopt;
  p.results_ = *std::move(out);
  for (int r : p.results_) p.result_types_.push_back(p.nodes_[r].type);
  return p;
}

void ScalarProgram::Run(const SVal* params, SVal* results, std::vector<SVal>& r) const {
  r.resize(nodes_.size());
  for (size_t k = 0; k < nodes_.size(); ++k) {
    const Node& n = nodes_[k];
    const bool fl = IsFloat(n.type);
    SVal v;
    switch (n.op) {
      case Opcode::kParameter: v = params[n.param]; break;
      case Opcode::kConstant: v = n.constant; break;
      case Opcode::kCompare: {
        const SVal& a = r[n.a];
        const SVal& b = r[n.b];
        if (IsFloat(n.in_type)) {
          v.i = n.total_order ? Cmp(n.dir, TotalKey(a.f), TotalKey(b.f)) : Cmp(n.dir, a.f, b.f);
        } else if (IsUnsigned(n.in_type)) {
          v.i = Cmp(n.dir, static_cast<uint64_t>(a.i), static_cast<uint64_t>(b.i));
        } else {
          v.i = Cmp(n.dir, a.i, b.i);
        }
        break;
      }
      case Opcode::kSelect: v = r[n.a].i != 0 ? r[n.b] : r[n.c]; break;
      case Opcode::kClamp:  // clamp(min, x, max)
        if (fl) v.f = std::min(std::max(r[n.b].f, r[n.a].f), r[n.c].f);
        else v.i = std::min(std::max(r[n.b].i, r[n.a].i), r[n.c].i);
        break;
      case Opcode::kAdd: if (fl) v.f = r[n.a].f + r[n.b].f; else v.i = static_cast<int64_t>(static_cast<uint64_t>(r[n.a].i) + static_cast<uint64_t>(r[n.b].i)); break;
      case Opcode::kSubtract: if (fl) v.f = r[n.a].f - r[n.b].f; else v.i = static_cast<int64_t>(static_cast<uint64_t>(r[n.a].i) - static_cast<uint64_t>(r[n.b].i)); break;
      case Opcode::kMultiply: if (fl) v.f = r[n.a].f * r[n.b].f; else v.i = static_cast<int64_t>(static_cast<uint64_t>(r[n.a].i) * static_cast<uint64_t>(r[n.b].i)); break;
      case Opcode::kDivide:
        if (fl) v.f = r[n.a].f / r[n.b].f;
        else if (r[n.b].i == 0) v.i = -1;
        else if (IsUnsigned(n.type)) v.i = static_cast<int64_t>(static_cast<uint64_t>(r[n.a].i) / static_cast<uint64_t>(r[n.b].i));
        else if (r[n.b].i == -1) v.i = static_cast<int64_t>(0 - static_cast<uint64_t>(r[n.a].i));
        else v.i = r[n.a].i / r[n.b].i;
        break;
      case Opcode::kMaximum:
      case Opcode::kMinimum: {
        const bool mx = n.op == Opcode::kMaximum;
        if (fl) {
          const double a = r[n.a].f, b = r[n.b].f;
          v.f = (std::isnan(a) || std::isnan(b)) ? NAN : (mx ? std::max(a, b) : std::min(a, b));
        } else if (IsUnsigned(n.type)) {
          const uint64_t a = r[n.a].i, b = r[n.b].i;
          v.i = static_cast<int64_t>(mx ? std::max(a, b) : std::min(a, b));
        } else {
          v.i = mx ? std::max(r[n.a].i, r[n.b].i) : std::min(r[n.a].i, r[n.b].i);
        }
        break;
      }
      case Opcode::kAnd: v.i = r[n.a].i & r[n.b].i; break;
      case Opcode::kOr: v.i = r[n.a].i | r[n.b].i; break;
      case Opcode::kXor: v.i = r[n.a].i ^ r[n.b].i; break;
      case Opcode::kNot: v.i = n.type == PrimitiveType::kPred ? !r[n.a].i : ~r[n.a].i; break;
      case Opcode::kNegate: if (fl) v.f = -r[n.a].f; else v.i = static_cast<int64_t>(0 - static_cast<uint64_t>(r[n.a].i)); break;
      case Opcode::kAbs: if (fl) v.f = std::fabs(r[n.a].f); else v.i = r[n.a].i < 0 ? -r[n.a].i : r[n.a].i; break;
      case Opcode::kIsFinite: v.i = std::isfinite(r[n.a].f); break;
      case Opcode::kCopy: v = r[n.a]; break;
      case Opcode::kBitcastConvert: v = FromBits(n.type, RawBits(n.in_type, r[n.a])); break;
      case Opcode::kConvert: {
        const SVal& a = r[n.a];
        if (fl) {
          v.f = IsFloat(n.in_type) ? a.f : (IsUnsigned(n.in_type) ? static_cast<double>(static_cast<uint64_t>(a.i)) : static_cast<double>(a.i));
        } else if (n.type == PrimitiveType::kPred) {
          v.i = IsFloat(n.in_type) ? (a.f != 0) : (a.i != 0);
        } else if (IsFloat(n.in_type)) {
          // XLA saturates float->int conversions; NaN becomes 0.
          const double f = std::trunc(a.f);
          const bool uns = IsUnsigned(n.type);
          const int bits = PrimitiveBitWidth(n.type);
          const double lo = uns ? 0.0 : -std::ldexp(1.0, bits - 1);
          const double hi = uns ? std::ldexp(1.0, bits) : std::ldexp(1.0, bits - 1);
          if (std::isnan(f)) v.i = 0;
          else if (f <= lo) v.i = uns ? 0 : static_cast<int64_t>(lo);
          else if (f >= hi) v.i = uns ? static_cast<int64_t>(bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1) : static_cast<int64_t>(hi - 1);
          else v.i = uns ? static_cast<int64_t>(static_cast<uint64_t>(f)) : static_cast<int64_t>(f);
        } else {
          v.i = a.i;
        }
        break;
      }
      default: break;
    }
    if (fl) v.f = RoundTo(n.type, v.f);
    else v.i = WrapInt(n.type, v.i);
    r[k] = v;
  }
  for (size_t k = 0; k < results_.size(); ++k) results[k] = r[results_[k]];
}

}  // namespace hlox::rt
