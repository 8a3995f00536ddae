// Helpers shared by kernels: element-type traits (storage vs compute type, f16/bf16 computed in
// f32), a type dispatcher, row-major strides and multi-index iteration, and small status helpers.
// Buffers are always dense logical row-major (see core/value.h).
#pragma once

#include <complex>
#include <cstring>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "runtime/core/value.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace hlox::rt {

// IEEE half <-> float with round-to-nearest-even: the F16C instructions when the build targets
// them (same results as ir/literal.h's portable versions), else those.
inline float LoadHalf(uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);
#else
  return HalfToFloat(h);
#endif
}
inline uint16_t StoreHalf(float f) {
#if defined(__F16C__)
  return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
#else
  return FloatToHalf(f);
#endif
}
// bfloat16: the upper half of an f32; rounding to nearest even, NaN kept quiet.
inline float LoadBf16(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline uint16_t StoreBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

struct Half { uint16_t bits; };
struct BFloat16 { uint16_t bits; };

// Traits per element type: Storage is what the buffer holds, Compute what arithmetic uses.
template <PrimitiveType PT> struct TypeTraits;
#define HLOX_SIMPLE_TRAITS(PT, T)                          \
  template <> struct TypeTraits<PrimitiveType::PT> {       \
    using Storage = T;                                     \
    using Compute = T;                                     \
    static constexpr PrimitiveType kType = PrimitiveType::PT; \
    static Compute Load(Storage s) { return s; }           \
    static Storage Store(Compute c) { return c; }          \
  };
HLOX_SIMPLE_TRAITS(kS8, int8_t)
HLOX_SIMPLE_TRAITS(kS16, int16_t)
HLOX_SIMPLE_TRAITS(kS32, int32_t)
HLOX_SIMPLE_TRAITS(kS64, int64_t)
HLOX_SIMPLE_TRAITS(kU8, uint8_t)
HLOX_SIMPLE_TRAITS(kU16, uint16_t)
HLOX_SIMPLE_TRAITS(kU32, uint32_t)
HLOX_SIMPLE_TRAITS(kU64, uint64_t)
HLOX_SIMPLE_TRAITS(kF32, float)
HLOX_SIMPLE_TRAITS(kF64, double)
HLOX_SIMPLE_TRAITS(kC64, std::complex<float>)
HLOX_SIMPLE_TRAITS(kC128, std::complex<double>)
#undef HLOX_SIMPLE_TRAITS
template <> struct TypeTraits<PrimitiveType::kPred> {
  using Storage = uint8_t;
  using Compute = bool;
  static constexpr PrimitiveType kType = PrimitiveType::kPred;
  static Compute Load(Storage s) { return s != 0; }
  static Storage Store(Compute c) { return c ? 1 : 0; }
};
template <> struct TypeTraits<PrimitiveType::kF16> {
  using Storage = uint16_t;
  using Compute = float;
  static constexpr PrimitiveType kType = PrimitiveType::kF16;
  static Compute Load(Storage s) { return LoadHalf(s); }
  static Storage Store(Compute c) { return StoreHalf(c); }
};
template <> struct TypeTraits<PrimitiveType::kBF16> {
  using Storage = uint16_t;
  using Compute = float;
  static constexpr PrimitiveType kType = PrimitiveType::kBF16;
  static Compute Load(Storage s) { return LoadBf16(s); }
  static Storage Store(Compute c) { return StoreBf16(c); }
};

template <PrimitiveType PT> struct TypeTag { using Traits = TypeTraits<PT>; static constexpr PrimitiveType kType = PT; };

// Calls f(TypeTag<PT>{}) for the array element types with arithmetic traits; returns an
// Unimplemented status naming `what` for any other type (sub-byte ints, f8, tuples).
template <typename F>
absl::Status DispatchType(PrimitiveType t, const char* what, F&& f) {
  switch (t) {
#define HLOX_CASE(PT) case PrimitiveType::PT: return f(TypeTag<PrimitiveType::PT>{});
    HLOX_CASE(kPred) HLOX_CASE(kS8) HLOX_CASE(kS16) HLOX_CASE(kS32) HLOX_CASE(kS64)
    HLOX_CASE(kU8) HLOX_CASE(kU16) HLOX_CASE(kU32) HLOX_CASE(kU64) HLOX_CASE(kF16)
    HLOX_CASE(kBF16) HLOX_CASE(kF32) HLOX_CASE(kF64) HLOX_CASE(kC64) HLOX_CASE(kC128)
#undef HLOX_CASE
    default:
      return absl::UnimplementedError(absl::StrCat(what, ": element type ",
                                                   std::string(PrimitiveTypeName(t)),
                                                   " is not supported"));
  }
}

// Row-major strides (in elements) of `dims`.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);
// Advances a row-major multi-index over `dims`; returns false after the last index.
bool NextIndex(std::vector<int64_t>& index, const std::vector<int64_t>& dims);
// A fresh array value of `shape` (uninitialized).
inline Value NewArray(const Shape& shape) { return Value::Array(std::make_shared<Buffer>(shape)); }
// The array buffer of operand i, or an InvalidArgument error if it is not an array.
absl::StatusOr<const Buffer*> ArrayOperand(const Instruction& instr,
                                           const std::vector<const Value*>& operands, size_t i);
// Reads element i of an integer (or pred) buffer as int64 (for indices).
int64_t ReadIndex(const Buffer& b, int64_t i);
// Deep copy of a value (fresh buffers).
Value CloneValue(const Value& v);
// Error helper: InvalidArgument "instr: msg".
absl::Status KernelError(const Instruction& instr, std::string_view msg);

// The non-negative integer after `"key":` in a backend_config (hlox's codegen keys live in
// the same JSON object as XLA's); false, with *out untouched, when the key is absent or its
// value is not a plain integer below 2^40.
bool ReadConfigInt(const std::string& config, std::string_view key, int64_t* out);

}  // namespace hlox::rt
