// Shared helpers of the kernel families (see kernels/scalar_access.h).
#include "runtime/kernels/scalar_access.h"

#include <cmath>

#include "runtime/core/executor.h"
#include "ir/small_float.h"
#include "runtime/core/small_float_widen.h"

namespace hlox::rt {
namespace {

template <typename T>
T WrapToInt(double v) {
  if (std::isnan(v)) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (v >= 9.2233720368547758e18) return static_cast<T>(INT64_MAX);
    if (v <= -9.2233720368547758e18) return static_cast<T>(INT64_MIN);
    return static_cast<T>(static_cast<int64_t>(v));
  } else {
    if (v >= 1.8446744073709552e19) return static_cast<T>(UINT64_MAX);
    if (v <= -9.2233720368547758e18) return 0;
    return v < 0 ? static_cast<T>(static_cast<int64_t>(v)) : static_cast<T>(static_cast<uint64_t>(v));
  }
}

}  // namespace

bool IsRealType(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred: case PrimitiveType::kS8: case PrimitiveType::kS16:
    case PrimitiveType::kS32: case PrimitiveType::kS64: case PrimitiveType::kU8:
    case PrimitiveType::kU16: case PrimitiveType::kU32: case PrimitiveType::kU64:
    case PrimitiveType::kF16: case PrimitiveType::kBF16: case PrimitiveType::kF32:
    case PrimitiveType::kF64:
      return true;
    default:
      return false;
  }
}

bool LoadsAsDouble(PrimitiveType t) { return IsRealType(t) || IsSmallFloat(t); }

double LoadDouble(const Buffer& b, int64_t i) {
  switch (b.shape().element_type()) {
    case PrimitiveType::kPred: return b.as<uint8_t>()[i] != 0 ? 1.0 : 0.0;
    case PrimitiveType::kS8: return b.as<int8_t>()[i];
    case PrimitiveType::kS16: return b.as<int16_t>()[i];
    case PrimitiveType::kS32: return b.as<int32_t>()[i];
    case PrimitiveType::kS64: return static_cast<double>(b.as<int64_t>()[i]);
    case PrimitiveType::kU8: return b.as<uint8_t>()[i];
    case PrimitiveType::kU16: return b.as<uint16_t>()[i];
    case PrimitiveType::kU32: return b.as<uint32_t>()[i];
    case PrimitiveType::kU64: return static_cast<double>(b.as<uint64_t>()[i]);
    case PrimitiveType::kF16: return HalfToFloat(b.as<uint16_t>()[i]);
    case PrimitiveType::kBF16: return Bf16ToFloat(b.as<uint16_t>()[i]);
    case PrimitiveType::kF32: return b.as<float>()[i];
    case PrimitiveType::kF64: return b.as<double>()[i];
    default:
      return IsSmallFloat(b.shape().element_type()) ? SmallFloatToFloat(b.shape().element_type(), b.data()[i])
                                                    : 0.0;
  }
}

void StoreDouble(Buffer& b, int64_t i, double v) {
  switch (b.shape().element_type()) {
    case PrimitiveType::kPred: b.as<uint8_t>()[i] = v != 0 ? 1 : 0; break;
    case PrimitiveType::kS8: b.as<int8_t>()[i] = WrapToInt<int8_t>(v); break;
    case PrimitiveType::kS16: b.as<int16_t>()[i] = WrapToInt<int16_t>(v); break;
    case PrimitiveType::kS32: b.as<int32_t>()[i] = WrapToInt<int32_t>(v); break;
    case PrimitiveType::kS64: b.as<int64_t>()[i] = WrapToInt<int64_t>(v); break;
    case PrimitiveType::kU8: b.as<uint8_t>()[i] = WrapToInt<uint8_t>(v); break;
    case PrimitiveType::kU16: b.as<uint16_t>()[i] = WrapToInt<uint16_t>(v); break;
    case PrimitiveType::kU32: b.as<uint32_t>()[i] = WrapToInt<uint32_t>(v); break;
    case PrimitiveType::kU64: b.as<uint64_t>()[i] = WrapToInt<uint64_t>(v); break;
    case PrimitiveType::kF16: b.as<uint16_t>()[i] = FloatToHalf(static_cast<float>(v)); break;
    case PrimitiveType::kBF16: b.as<uint16_t>()[i] = FloatToBf16(static_cast<float>(v)); break;
    case PrimitiveType::kF32: b.as<float>()[i] = static_cast<float>(v); break;
    case PrimitiveType::kF64: b.as<double>()[i] = v; break;
    default:
      if (IsSmallFloat(b.shape().element_type())) b.data()[i] = SmallFloatConvert(b.shape().element_type(), v);
      break;
  }
}

std::vector<double> ToDoubles(const Buffer& b) {
  std::vector<double> out(b.element_count());
  if (b.shape().element_type() == PrimitiveType::kF64) {
    std::memcpy(out.data(), b.data(), out.size() * sizeof(double));
    return out;
  }
  for (int64_t i = 0; i < b.element_count(); ++i) out[i] = LoadDouble(b, i);
  return out;
}

std::vector<float> ToFloats(const Buffer& b) {
  std::vector<float> out(b.element_count());
  if (b.shape().element_type() == PrimitiveType::kF32) {
    std::memcpy(out.data(), b.data(), out.size() * sizeof(float));
    return out;
  }
  for (int64_t i = 0; i < b.element_count(); ++i) out[i] = static_cast<float>(LoadDouble(b, i));
  return out;
}

void FromDoubles(const std::vector<double>& v, Buffer& b) {
  for (int64_t i = 0; i < b.element_count(); ++i) StoreDouble(b, i, v[i]);
}

void FromFloats(const std::vector<float>& v, Buffer& b) {
  if (b.shape().element_type() == PrimitiveType::kF32) {
    std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
    return;
  }
  for (int64_t i = 0; i < b.element_count(); ++i) StoreDouble(b, i, v[i]);
}

void KernelParallelFor(KernelContext& ctx, int64_t n, int64_t grain,
                       const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (ctx.pool == nullptr) {
    fn(0, n);
    return;
  }
  ctx.pool->ParallelFor(n, grain, fn);
}

ScalarOp ClassifyBinary(const Computation* comp) {
  if (comp == nullptr || comp->parameter_count() != 2 || comp->root() == nullptr) {
    return ScalarOp::kOther;
  }
  const Instruction* root = comp->root();
  if (root->opcode() == Opcode::kParameter) {
    return root->parameter_number() == 1 ? ScalarOp::kAssignSecond : ScalarOp::kAssignFirst;
  }
  if (root->operand_count() != 2) return ScalarOp::kOther;
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  if (a->opcode() != Opcode::kParameter || b->opcode() != Opcode::kParameter ||
      a->parameter_number() == b->parameter_number()) {
    return ScalarOp::kOther;
  }
  if (!root->shape().IsArray() || root->shape().rank() != 0) return ScalarOp::kOther;
  switch (root->opcode()) {
    case Opcode::kAdd: return ScalarOp::kAdd;
    case Opcode::kMultiply: return ScalarOp::kMul;
    case Opcode::kMaximum: return ScalarOp::kMax;
    case Opcode::kMinimum: return ScalarOp::kMin;
    case Opcode::kAnd: return ScalarOp::kAnd;
    case Opcode::kOr: return ScalarOp::kOr;
    default: return ScalarOp::kOther;
  }
}

double ApplyScalarOp(ScalarOp op, double a, double b) {
  switch (op) {
    case ScalarOp::kAdd: return a + b;
    case ScalarOp::kMul: return a * b;
    // XLA's maximum/minimum propagate NaN.
    case ScalarOp::kMax: return (std::isnan(a) || std::isnan(b)) ? NAN : (a > b ? a : b);
    case ScalarOp::kMin: return (std::isnan(a) || std::isnan(b)) ? NAN : (a < b ? a : b);
    case ScalarOp::kAnd: return (a != 0 && b != 0) ? 1 : 0;
    case ScalarOp::kOr: return (a != 0 || b != 0) ? 1 : 0;
    case ScalarOp::kAssignSecond: return b;
    case ScalarOp::kAssignFirst: return a;
    case ScalarOp::kOther: break;
  }
  return a;
}

Value ScalarValue(PrimitiveType t, double v) {
  auto b = std::make_shared<Buffer>(Shape(t, {}));
  StoreDouble(*b, 0, v);
  return Value::Array(std::move(b));
}

Value ElementValue(const Buffer& b, int64_t i) {
  auto out = std::make_shared<Buffer>(Shape(b.shape().element_type(), {}));
  int64_t sz = PrimitiveByteSize(b.shape().element_type());
  std::memcpy(out->data(), b.data() + i * sz, sz);
  return Value::Array(std::move(out));
}

absl::StatusOr<std::vector<BufferPtr>> CallComputation(KernelContext& ctx, const Computation& comp,
                                                       const std::vector<Value>& args) {
  if (ctx.executor == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("calling computation ", comp.name(), " needs an executor"));
  }
  std::vector<const Value*> ptrs;
  ptrs.reserve(args.size());
  for (const Value& v : args) ptrs.push_back(&v);
  auto result = ctx.executor->RunComputation(comp, ptrs);
  if (!result.ok()) return result.status();
  std::vector<BufferPtr> leaves;
  result->Flatten(&leaves);
  return leaves;
}

}  // namespace hlox::rt
