// Literal values of constants: a shape plus its elements stored densely in row-major order
// (logical index order, independent of the shape's layout), or a tuple of literals. A constant
// whose values were elided in the text (`constant({...})`) is a Literal with elided() set and no
// data; the runtime fills it from a seed.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ir/shape.h"

namespace hlox {

class Literal {
 public:
  Literal() = default;
  // Zero-filled literal of an array shape, or a tuple of zero-filled literals.
  explicit Literal(Shape shape);
  static Literal Elided(Shape shape);

  const Shape& shape() const { return shape_; }
  bool elided() const { return elided_; }
  int64_t element_count() const { return shape_.ElementCount(); }

  uint8_t* data() { return data_.data(); }
  const uint8_t* data() const { return data_.data(); }
  int64_t byte_size() const { return static_cast<int64_t>(data_.size()); }

  std::vector<Literal>& tuple_elements() { return tuple_; }
  const std::vector<Literal>& tuple_elements() const { return tuple_; }

  // Element i (row-major) converted to double / int64 / complex; the setters convert back with
  // the element type's rounding (f16/bf16 round to nearest even).
  double GetAsDouble(int64_t i) const;
  int64_t GetAsInt64(int64_t i) const;
  uint64_t GetAsUint64(int64_t i) const;
  std::complex<double> GetAsComplex(int64_t i) const;
  void SetFromDouble(int64_t i, double v);
  void SetFromInt64(int64_t i, int64_t v);
  void SetFromUint64(int64_t i, uint64_t v);
  void SetFromComplex(int64_t i, std::complex<double> v);

  template <typename T>
  T Get(int64_t i) const {
    T v;
    std::memcpy(&v, data_.data() + i * sizeof(T), sizeof(T));
    return v;
  }

  // Bitwise equality of shape (ignoring layout), elision and data.
  bool operator==(const Literal& o) const;

 private:
  Shape shape_;
  bool elided_ = false;
  std::vector<uint8_t> data_;
  std::vector<Literal> tuple_;
};

// IEEE half and bfloat16 conversions (round to nearest even), shared by IR and runtime.
uint16_t FloatToHalf(float f);
float HalfToFloat(uint16_t h);
uint16_t FloatToBf16(float f);
float Bf16ToFloat(uint16_t b);

}  // namespace hlox
