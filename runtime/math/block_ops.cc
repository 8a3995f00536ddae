// Integer block operations and type wrapping for the fused loop (see math/block_ops.h). Integer
// semantics follow XLA: arithmetic wraps; x/0 is -1 (all ones), x%0 is x; MIN/-1 is MIN;
// shifts by the bit width or more give 0 (or the sign fill for arithmetic right shifts).
// Rounding to f16 uses math/half.h's vector conversions (bit-identical to literal.h's).
#include "runtime/math/block_ops.h"

#include "runtime/math/half.h"

namespace hlox::rt::fused {

int IntBits(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred: return 1;
    case PrimitiveType::kS8: case PrimitiveType::kU8: return 8;
    case PrimitiveType::kS16: case PrimitiveType::kU16: return 16;
    case PrimitiveType::kS32: case PrimitiveType::kU32: return 32;
    case PrimitiveType::kS64: return 64;
    default: return 0;
  }
}

bool IsUnsignedIntOrPred(PrimitiveType t) {
  return t == PrimitiveType::kU8 || t == PrimitiveType::kU16 || t == PrimitiveType::kU32 ||
         t == PrimitiveType::kPred;
}

namespace {
inline int64_t TypeMin(PrimitiveType t) {
  int bits = IntBits(t);
  if (IsUnsignedIntOrPred(t)) return 0;
  return bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
}
}  // namespace

void WrapToType(PrimitiveType t, int64_t* x, int64_t n) {
  // One loop per type (the switch outside, so each loop vectorizes).
  auto wrap = [&](auto tag) {
    using W = decltype(tag);
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<W>(x[i]);
  };
  switch (t) {
    case PrimitiveType::kPred: for (int64_t i = 0; i < n; ++i) x[i] = x[i] != 0; break;
    case PrimitiveType::kS8: wrap(int8_t{}); break;
    case PrimitiveType::kS16: wrap(int16_t{}); break;
    case PrimitiveType::kS32: wrap(int32_t{}); break;
    case PrimitiveType::kU8: wrap(uint8_t{}); break;
    case PrimitiveType::kU16: wrap(uint16_t{}); break;
    case PrimitiveType::kU32: wrap(uint32_t{}); break;
    default: break;
  }
}

void RoundToType(PrimitiveType t, float* x, int64_t n) {
  if (t == PrimitiveType::kBF16) {
    RoundBf16InPlace(x, n);
  } else if (t == PrimitiveType::kF16) {
    RoundF16InPlace(x, n);
  }
}

bool UnaryInt(Opcode op, PrimitiveType t, const int64_t* a, int64_t* o, int64_t n) {
  switch (op) {
    case Opcode::kNegate:
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<int64_t>(0ull - static_cast<uint64_t>(a[i]));
      break;
    case Opcode::kAbs:
      for (int64_t i = 0; i < n; ++i) o[i] = a[i] < 0 ? static_cast<int64_t>(0ull - static_cast<uint64_t>(a[i])) : a[i];
      break;
    case Opcode::kSign: for (int64_t i = 0; i < n; ++i) o[i] = (a[i] > 0) - (a[i] < 0); break;
    case Opcode::kCopy: for (int64_t i = 0; i < n; ++i) o[i] = a[i]; break;
    case Opcode::kNot:
      if (t == PrimitiveType::kPred) {
        for (int64_t i = 0; i < n; ++i) o[i] = a[i] == 0;
      } else {
        for (int64_t i = 0; i < n; ++i) o[i] = ~a[i];
      }
      break;
    default:
      return false;
  }
  WrapToType(t, o, n);
  return true;
}

bool BinaryInt(Opcode op, PrimitiveType t, const int64_t* a, const int64_t* b, int64_t* o,
               int64_t n) {
  const int bits = IntBits(t);
  const bool uns = IsUnsignedIntOrPred(t);
  const int64_t tmin = TypeMin(t);
  auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  switch (op) {
    case Opcode::kAdd: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<int64_t>(u(a[i]) + u(b[i])); break;
    case Opcode::kSubtract: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<int64_t>(u(a[i]) - u(b[i])); break;
    case Opcode::kMultiply: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<int64_t>(u(a[i]) * u(b[i])); break;
    case Opcode::kMaximum: for (int64_t i = 0; i < n; ++i) o[i] = a[i] > b[i] ? a[i] : b[i]; break;
    case Opcode::kMinimum: for (int64_t i = 0; i < n; ++i) o[i] = a[i] < b[i] ? a[i] : b[i]; break;
    case Opcode::kAnd: for (int64_t i = 0; i < n; ++i) o[i] = a[i] & b[i]; break;
    case Opcode::kOr: for (int64_t i = 0; i < n; ++i) o[i] = a[i] | b[i]; break;
    case Opcode::kXor: for (int64_t i = 0; i < n; ++i) o[i] = a[i] ^ b[i]; break;
    case Opcode::kDivide:
      for (int64_t i = 0; i < n; ++i) {
        if (b[i] == 0) o[i] = -1;
        else if (!uns && a[i] == tmin && b[i] == -1) o[i] = tmin;
        else o[i] = a[i] / b[i];
      }
      break;
    case Opcode::kRemainder:
      for (int64_t i = 0; i < n; ++i) {
        if (b[i] == 0) o[i] = a[i];
        else if (!uns && a[i] == tmin && b[i] == -1) o[i] = 0;
        else o[i] = a[i] % b[i];
      }
      break;
    case Opcode::kShiftLeft:
      for (int64_t i = 0; i < n; ++i) o[i] = u(b[i]) >= u(bits) ? 0 : static_cast<int64_t>(u(a[i]) << b[i]);
      break;
    case Opcode::kShiftRightLogical: {
      uint64_t mask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
      for (int64_t i = 0; i < n; ++i) o[i] = u(b[i]) >= u(bits) ? 0 : static_cast<int64_t>((u(a[i]) & mask) >> b[i]);
      break;
    }
    case Opcode::kShiftRightArithmetic:
      for (int64_t i = 0; i < n; ++i) {
        int64_t sa = bits == 64 ? a[i] : static_cast<int64_t>(u(a[i]) << (64 - bits)) >> (64 - bits);
        int64_t sh = u(b[i]) >= u(bits) ? bits - 1 : b[i];
        o[i] = sa >> sh;
      }
      break;
    default:
      return false;
  }
  if (bits == 1 && (op == Opcode::kAdd || op == Opcode::kSubtract || op == Opcode::kMultiply ||
                    op == Opcode::kDivide || op == Opcode::kRemainder || op == Opcode::kShiftLeft ||
                    op == Opcode::kShiftRightLogical || op == Opcode::kShiftRightArithmetic)) {
    return false;  // arithmetic on pred is not valid HLO
  }
  WrapToType(t, o, n);
  return true;
}

}  // namespace hlox::rt::fused
