// Element types of XLA HLO: the enum, its text spelling and its storage size.
// Every other part of hlox names element types through this one table.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace hlox {

// X(Enum, "text", bit_width, kind) where kind is one of
// 'p' pred, 's' signed int, 'u' unsigned int, 'f' float, 'c' complex, 'x' non-array.
// The floats after kOpaque came later; they sit at the end so that the enum values of the
// others (used as numbers, e.g. in passes/features.cc) do not move.
#define HLOX_PRIMITIVE_TYPE_LIST(X) \
  X(kPred, "pred", 8, 'p')          \
  X(kS2, "s2", 2, 's')              \
  X(kS4, "s4", 4, 's')              \
  X(kS8, "s8", 8, 's')              \
  X(kS16, "s16", 16, 's')           \
  X(kS32, "s32", 32, 's')           \
  X(kS64, "s64", 64, 's')           \
  X(kU2, "u2", 2, 'u')              \
  X(kU4, "u4", 4, 'u')              \
  X(kU8, "u8", 8, 'u')              \
  X(kU16, "u16", 16, 'u')           \
  X(kU32, "u32", 32, 'u')           \
  X(kU64, "u64", 64, 'u')           \
  X(kF8E5M2, "f8e5m2", 8, 'f')      \
  X(kF8E4M3FN, "f8e4m3fn", 8, 'f')  \
  X(kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8, 'f') \
  X(kF8E5M2FNUZ, "f8e5m2fnuz", 8, 'f') \
  X(kF8E4M3FNUZ, "f8e4m3fnuz", 8, 'f') \
  X(kF16, "f16", 16, 'f')           \
  X(kBF16, "bf16", 16, 'f')         \
  X(kF32, "f32", 32, 'f')           \
  X(kF64, "f64", 64, 'f')           \
  X(kC64, "c64", 64, 'c')           \
  X(kC128, "c128", 128, 'c')        \
  X(kTuple, "tuple", 0, 'x')        \
  X(kToken, "token", 0, 'x')        \
  X(kOpaque, "opaque", 0, 'x')      \
  X(kF8E3M4, "f8e3m4", 8, 'f')      \
  X(kF8E4M3, "f8e4m3", 8, 'f')      \
  X(kF4E2M1FN, "f4e2m1fn", 4, 'f')  \
  X(kF8E8M0FNU, "f8e8m0fnu", 8, 'f')

enum class PrimitiveType : uint8_t {
#define HLOX_PT_ENUM(e, s, b, k) e,
  HLOX_PRIMITIVE_TYPE_LIST(HLOX_PT_ENUM)
#undef HLOX_PT_ENUM
};

// Text spelling used in HLO ("f32", "pred", ...).
std::string_view PrimitiveTypeName(PrimitiveType t);
// Inverse of PrimitiveTypeName; nullopt for an unknown spelling.
std::optional<PrimitiveType> ParsePrimitiveType(std::string_view s);

int PrimitiveBitWidth(PrimitiveType t);
// Bytes one element occupies in hlox's runtime buffers (sub-byte ints take one byte).
int64_t PrimitiveByteSize(PrimitiveType t);
bool IsArrayType(PrimitiveType t);  // false for tuple, token, opaque
bool IsFloatingPoint(PrimitiveType t);
bool IsComplex(PrimitiveType t);
bool IsSignedInt(PrimitiveType t);
bool IsUnsignedInt(PrimitiveType t);
inline bool IsInteger(PrimitiveType t) { return IsSignedInt(t) || IsUnsignedInt(t); }
inline bool IsPred(PrimitiveType t) { return t == PrimitiveType::kPred; }

}  // namespace hlox
