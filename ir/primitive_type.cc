// Lookup functions over HLOX_PRIMITIVE_TYPE_LIST.
#include "ir/primitive_type.h"

namespace hlox {
namespace {

struct TypeInfo {
  std::string_view name;
  int bits;
  char kind;
};

constexpr TypeInfo kTypeInfo[] = {
#define HLOX_PT_INFO(e, s, b, k) {s, b, k},
    HLOX_PRIMITIVE_TYPE_LIST(HLOX_PT_INFO)
#undef HLOX_PT_INFO
};

const TypeInfo& Info(PrimitiveType t) { return kTypeInfo[static_cast<int>(t)]; }

}  // namespace

std::string_view PrimitiveTypeName(PrimitiveType t) { return Info(t).name; }

std::optional<PrimitiveType> ParsePrimitiveType(std::string_view s) {
  for (size_t i = 0; i < sizeof(kTypeInfo) / sizeof(kTypeInfo[0]); ++i) {
    if (kTypeInfo[i].name == s) return static_cast<PrimitiveType>(i);
  }
  return std::nullopt;
}

int PrimitiveBitWidth(PrimitiveType t) { return Info(t).bits; }

int64_t PrimitiveByteSize(PrimitiveType t) {
  int bits = Info(t).bits;
  return bits <= 8 ? (bits == 0 ? 0 : 1) : bits / 8;
}

bool IsArrayType(PrimitiveType t) { return Info(t).kind != 'x'; }
bool IsFloatingPoint(PrimitiveType t) { return Info(t).kind == 'f'; }
bool IsComplex(PrimitiveType t) { return Info(t).kind == 'c'; }
bool IsSignedInt(PrimitiveType t) { return Info(t).kind == 's'; }
bool IsUnsignedInt(PrimitiveType t) { return Info(t).kind == 'u'; }

}  // namespace hlox
