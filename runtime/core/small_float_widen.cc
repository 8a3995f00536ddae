// Small-float arithmetic by widening to f32 (see core/small_float_widen.h).
#include "runtime/core/small_float_widen.h"

#include <array>
#include <cmath>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "ir/small_float.h"

namespace hlox::rt {
namespace {

constexpr int kSmallFloatCount = static_cast<int>(std::size(kSmallFloatTypes));

// Index of a small float type in kSmallFloatTypes, or -1.
int SmallFloatIndex(PrimitiveType t) {
  for (int k = 0; k < kSmallFloatCount; ++k) {
    if (kSmallFloatTypes[k] == t) return k;
  }
  return -1;
}

// Each type's 256 decoded codes (every code of a byte, so a stray high nibble
// of an f4 byte decodes as SmallFloatDecode reads it: low bits only), built once.
struct Tables {
  std::array<std::array<float, 256>, kSmallFloatCount> decoded;
};

const Tables& GetTables() {
  static const Tables* tables = [] {
    auto* t = new Tables();
    for (int k = 0; k < kSmallFloatCount; ++k) {
      const SmallFloatFormat f = *SmallFloatFormatOf(kSmallFloatTypes[k]);
      for (int c = 0; c < 256; ++c) {
        t->decoded[k][c] = static_cast<float>(SmallFloatDecode(f, static_cast<uint8_t>(c)));
      }
    }
    return t;
  }();
  return *tables;
}

Shape WidenedShape(const Shape& s) {
  if (s.IsTuple()) {
    std::vector<Shape> elems;
    for (const Shape& e : s.tuple_shapes()) elems.push_back(WidenedShape(e));
    return Shape::Tuple(std::move(elems));
  }
  if (!s.IsArray() || !IsSmallFloat(s.element_type())) return s;
  Shape w = s;
  w.set_element_type(PrimitiveType::kF32);
  if (w.has_layout()) {
    // Sub-byte element sizes and packing items describe the narrow type only.
    Layout l = *w.layout();
    l.element_size_in_bits = 0;
    w.set_layout(l);
  }
  return w;
}

// `v` with every small-float array leaf copied to an f32 buffer; other leaves shared.
Value Widen(const Value& v) {
  if (v.is_tuple) {
    std::vector<Value> elems;
    for (const Value& e : v.tuple) elems.push_back(Widen(e));
    return Value::Tuple(std::move(elems));
  }
  if (!v.is_array() || !IsSmallFloat(v.array->shape().element_type())) return v;
  const Buffer& in = *v.array;
  auto out = std::make_shared<Buffer>(WidenedShape(in.shape()));
  const std::array<float, 256>& table = GetTables().decoded[SmallFloatIndex(in.shape().element_type())];
  const uint8_t* src = in.data();
  float* dst = out->as<float>();
  for (int64_t i = 0; i < in.element_count(); ++i) dst[i] = table[src[i]];
  return Value::Array(std::move(out));
}

// `wide` (the widened kernel's result) with each leaf whose type in `want` is a small float
// rounded back to that type.
absl::StatusOr<Value> Narrow(const Value& wide, const Shape& want, const Instruction& instr) {
  if (want.IsTuple()) {
    if (!wide.is_tuple || static_cast<int64_t>(wide.tuple.size()) != want.tuple_size()) {
      return absl::InternalError(absl::StrCat(instr.name(), ": widened result is not a tuple of ",
                                              want.tuple_size()));
    }
    std::vector<Value> elems;
    for (int64_t k = 0; k < want.tuple_size(); ++k) {
      absl::StatusOr<Value> e = Narrow(wide.tuple[k], want.tuple_shape(k), instr);
      if (!e.ok()) return e.status();
      elems.push_back(*std::move(e));
    }
    return Value::Tuple(std::move(elems));
  }
  if (!want.IsArray() || !IsSmallFloat(want.element_type())) return wide;
  if (!wide.is_array() || wide.array->shape().element_type() != PrimitiveType::kF32 ||
      wide.array->element_count() != want.ElementCount()) {
    return absl::InternalError(absl::StrCat(instr.name(), ": widened result is not f32 of ",
                                            want.ElementCount(), " elements"));
  }
  auto out = std::make_shared<Buffer>(want);
  const float* src = wide.array->as<float>();
  const PrimitiveType t = want.element_type();
  uint8_t* dst = out->data();
  for (int64_t i = 0; i < want.ElementCount(); ++i) dst[i] = SmallFloatConvert(t, src[i]);
  return Value::Array(std::move(out));
}

}  // namespace

bool IsSmallFloat(PrimitiveType t) { return SmallFloatIndex(t) >= 0; }

bool HasSmallFloatLeaf(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& e : shape.tuple_shapes()) {
      if (HasSmallFloatLeaf(e)) return true;
    }
    return false;
  }
  return shape.IsArray() && IsSmallFloat(shape.element_type());
}

float SmallFloatToFloat(PrimitiveType t, uint8_t code) {
  return GetTables().decoded[SmallFloatIndex(t)][code];
}

bool ComputesByWidening(const Instruction& instr) {
  const Opcode op = instr.opcode();
  bool computes = false;
  switch (op) {
    case Opcode::kConvert: case Opcode::kBitcastConvert: case Opcode::kCopy:
      return false;  // data conversions and copies handle every type themselves
    case Opcode::kDot: case Opcode::kRaggedDot: case Opcode::kConvolution:
    case Opcode::kBatchNormGrad: case Opcode::kBatchNormInference: case Opcode::kBatchNormTraining:
    case Opcode::kCholesky: case Opcode::kTriangularSolve: case Opcode::kIota: case Opcode::kRng:
      computes = true;
      break;
    default:
      computes = IsElementwise(op);
      break;
  }
  if (!computes) return false;
  if (HasSmallFloatLeaf(instr.shape())) return true;
  for (const Instruction* o : instr.operands()) {
    if (HasSmallFloatLeaf(o->shape())) return true;
  }
  return false;
}

WidenedStep::WidenedStep(const Instruction& instr) : original_(instr) {
  std::vector<Instruction*> operands;
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    stand_ins_.push_back(Instruction::CreateParameter(i, WidenedShape(instr.operand(i)->shape())));
    operands.push_back(stand_ins_.back().get());
  }
  wide_ = instr.CloneWithOperands(WidenedShape(instr.shape()), std::move(operands));
}

WidenedStep::~WidenedStep() {
  wide_->DetachOperands();
  wide_.reset();
}

absl::StatusOr<Value> WidenedStep::Run(KernelFn kernel, const std::vector<const Value*>& operands,
                                       KernelContext& ctx) const {
  std::vector<Value> wide_values;
  wide_values.reserve(operands.size());
  for (const Value* v : operands) wide_values.push_back(Widen(*v));
  std::vector<const Value*> ptrs;
  ptrs.reserve(wide_values.size());
  for (const Value& v : wide_values) ptrs.push_back(&v);
  absl::StatusOr<Value> wide = kernel(*wide_, ptrs, ctx);
  if (!wide.ok()) return wide.status();
  return Narrow(*wide, original_.shape(), original_);
}

}  // namespace hlox::rt
