// Literal storage and the element conversions between XLA's element types and double/int64.
#include "ir/literal.h"

#include <bit>
#include <cmath>
#include <optional>

#include "ir/small_float.h"

namespace hlox {

uint16_t FloatToHalf(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or nan
    if (absx > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((absx >> 13) & 0x3ffu));
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (absx < 0x38800000u) {  // subnormal half or zero
    if (absx < 0x33000000u) return static_cast<uint16_t>(sign);
    uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
    int shift = 113 - static_cast<int>(absx >> 23) + 13;
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t h = ((absx - 0x38000000u) >> 13);
  uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | ((127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

uint16_t FloatToBf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return static_cast<uint16_t>(x >> 16);
}

float Bf16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

Literal::Literal(Shape shape) : shape_(std::move(shape)) {
  if (shape_.IsTuple()) {
    for (const Shape& s : shape_.tuple_shapes()) tuple_.emplace_back(s);
  } else {
    data_.assign(shape_.ByteSize(), 0);
  }
}

Literal Literal::Elided(Shape shape) {
  Literal l;
  l.shape_ = std::move(shape);
  l.elided_ = true;
  return l;
}

double Literal::GetAsDouble(int64_t i) const {
  switch (shape_.element_type()) {
    case PrimitiveType::kF16: return HalfToFloat(Get<uint16_t>(i));
    case PrimitiveType::kBF16: return Bf16ToFloat(Get<uint16_t>(i));
    case PrimitiveType::kF32: return Get<float>(i);
    case PrimitiveType::kF64: return Get<double>(i);
    case PrimitiveType::kF8E5M2: return HalfToFloat(static_cast<uint16_t>(Get<uint8_t>(i) << 8));
    case PrimitiveType::kC64:
    case PrimitiveType::kC128: return GetAsComplex(i).real();
    default:
      if (std::optional<SmallFloatFormat> f = SmallFloatFormatOf(shape_.element_type())) {
        return SmallFloatDecode(*f, Get<uint8_t>(i));
      }
      if (IsUnsignedInt(shape_.element_type()) || IsPred(shape_.element_type())) {
        return static_cast<double>(GetAsUint64(i));
      }
      return static_cast<double>(GetAsInt64(i));
  }
}

int64_t Literal::GetAsInt64(int64_t i) const {
  switch (shape_.element_type()) {
    case PrimitiveType::kPred:
    case PrimitiveType::kU2:
    case PrimitiveType::kU4:
    case PrimitiveType::kU8: return Get<uint8_t>(i);
    case PrimitiveType::kS2:
    case PrimitiveType::kS4:
    case PrimitiveType::kS8: return Get<int8_t>(i);
    case PrimitiveType::kS16: return Get<int16_t>(i);
    case PrimitiveType::kU16: return Get<uint16_t>(i);
    case PrimitiveType::kS32: return Get<int32_t>(i);
    case PrimitiveType::kU32: return Get<uint32_t>(i);
    case PrimitiveType::kS64: return Get<int64_t>(i);
    case PrimitiveType::kU64: return static_cast<int64_t>(Get<uint64_t>(i));
    default: return static_cast<int64_t>(GetAsDouble(i));
  }
}

uint64_t Literal::GetAsUint64(int64_t i) const {
  if (shape_.element_type() == PrimitiveType::kU64) return Get<uint64_t>(i);
  return static_cast<uint64_t>(GetAsInt64(i));
}

std::complex<double> Literal::GetAsComplex(int64_t i) const {
  if (shape_.element_type() == PrimitiveType::kC64) {
    return {Get<float>(2 * i), Get<float>(2 * i + 1)};
  }
  if (shape_.element_type() == PrimitiveType::kC128) {
    return {Get<double>(2 * i), Get<double>(2 * i + 1)};
  }
  return {GetAsDouble(i), 0.0};
}

namespace {
template <typename T>
void Put(std::vector<uint8_t>& data, int64_t i, T v) {
  std::memcpy(data.data() + i * sizeof(T), &v, sizeof(T));
}
}  // namespace

void Literal::SetFromDouble(int64_t i, double v) {
  switch (shape_.element_type()) {
    case PrimitiveType::kF16: Put(data_, i, FloatToHalf(static_cast<float>(v))); return;
    case PrimitiveType::kBF16: Put(data_, i, FloatToBf16(static_cast<float>(v))); return;
    case PrimitiveType::kF32: Put(data_, i, static_cast<float>(v)); return;
    case PrimitiveType::kF64: Put(data_, i, v); return;
    case PrimitiveType::kC64:
    case PrimitiveType::kC128: SetFromComplex(i, {v, 0.0}); return;
    case PrimitiveType::kPred: Put(data_, i, static_cast<uint8_t>(v != 0)); return;
    default:
      if (SmallFloatFormatOf(shape_.element_type())) {
        Put(data_, i, SmallFloatConvert(shape_.element_type(), v));
        return;
      }
      if (IsUnsignedInt(shape_.element_type())) {
        SetFromUint64(i, v <= 0 ? 0 : static_cast<uint64_t>(v));
      } else {
        SetFromInt64(i, static_cast<int64_t>(v));
      }
  }
}

void Literal::SetFromInt64(int64_t i, int64_t v) {
  switch (shape_.element_type()) {
    case PrimitiveType::kPred: Put(data_, i, static_cast<uint8_t>(v != 0)); return;
    // Narrow ints wrap to their width (kept sign- or zero-extended in their byte).
    case PrimitiveType::kS2: Put(data_, i, static_cast<int8_t>(((v & 3) ^ 2) - 2)); return;
    case PrimitiveType::kS4: Put(data_, i, static_cast<int8_t>(((v & 15) ^ 8) - 8)); return;
    case PrimitiveType::kS8: Put(data_, i, static_cast<int8_t>(v)); return;
    case PrimitiveType::kU2: Put(data_, i, static_cast<uint8_t>(v & 3)); return;
    case PrimitiveType::kU4: Put(data_, i, static_cast<uint8_t>(v & 15)); return;
    case PrimitiveType::kU8: Put(data_, i, static_cast<uint8_t>(v)); return;
    case PrimitiveType::kS16: Put(data_, i, static_cast<int16_t>(v)); return;
    case PrimitiveType::kU16: Put(data_, i, static_cast<uint16_t>(v)); return;
    case PrimitiveType::kS32: Put(data_, i, static_cast<int32_t>(v)); return;
    case PrimitiveType::kU32: Put(data_, i, static_cast<uint32_t>(v)); return;
    case PrimitiveType::kS64: Put(data_, i, v); return;
    case PrimitiveType::kU64: Put(data_, i, static_cast<uint64_t>(v)); return;
    default: SetFromDouble(i, static_cast<double>(v));
  }
}

void Literal::SetFromUint64(int64_t i, uint64_t v) {
  if (shape_.element_type() == PrimitiveType::kU64) {
    Put(data_, i, v);
  } else if (IsFloatingPoint(shape_.element_type()) || IsComplex(shape_.element_type())) {
    SetFromDouble(i, static_cast<double>(v));
  } else {
    SetFromInt64(i, static_cast<int64_t>(v));
  }
}

void Literal::SetFromComplex(int64_t i, std::complex<double> v) {
  if (shape_.element_type() == PrimitiveType::kC64) {
    Put(data_, 2 * i, static_cast<float>(v.real()));
    Put(data_, 2 * i + 1, static_cast<float>(v.imag()));
  } else if (shape_.element_type() == PrimitiveType::kC128) {
    Put(data_, 2 * i, v.real());
    Put(data_, 2 * i + 1, v.imag());
  } else {
    SetFromDouble(i, v.real());
  }
}

bool Literal::operator==(const Literal& o) const {
  return shape_.Compatible(o.shape_) && elided_ == o.elided_ && data_ == o.data_ && tuple_ == o.tuple_;
}

}  // namespace hlox
