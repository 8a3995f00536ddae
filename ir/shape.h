// Shapes and layouts: an array shape (element type, dimensions, optional layout), a tuple of
// shapes, or a token. Layouts are kept as parsed (minor-to-major plus tiles and any other
// layout items verbatim) so printing reproduces them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/primitive_type.h"

namespace hlox {

// One tile of a tiled layout, e.g. T(8,128). A dimension of -1 prints as '*'.
struct Tile {
  std::vector<int64_t> dims;
  bool operator==(const Tile&) const = default;
};

struct Layout {
  std::vector<int64_t> minor_to_major;
  std::vector<Tile> tiles;
  // Layout items after the tiles that hlox does not model (E(..), S(..), L(..), ...), verbatim.
  std::string extra;
  bool operator==(const Layout&) const = default;
};

class Shape {
 public:
  Shape() = default;
  // Array shape with no layout.
  Shape(PrimitiveType type, std::vector<int64_t> dims);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();
  // Array shape with the default (descending, row-major) layout set.
  static Shape WithDefaultLayout(PrimitiveType type, std::vector<int64_t> dims);

  PrimitiveType element_type() const { return type_; }
  void set_element_type(PrimitiveType t) { type_ = t; }
  bool IsTuple() const { return type_ == PrimitiveType::kTuple; }
  bool IsToken() const { return type_ == PrimitiveType::kToken; }
  bool IsArray() const { return IsArrayType(type_); }

  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const std::vector<int64_t>& dims() const { return dims_; }
  std::vector<int64_t>& mutable_dims() { return dims_; }
  int64_t dim(int64_t i) const { return dims_[i]; }
  // Per-dimension dynamic flags ("<=N" in text); empty means all static.
  const std::vector<bool>& dynamic_dims() const { return dynamic_; }
  void set_dynamic_dims(std::vector<bool> d) { dynamic_ = std::move(d); }
  bool is_dynamic_dim(int64_t i) const { return !dynamic_.empty() && dynamic_[i]; }

  const std::vector<Shape>& tuple_shapes() const { return tuple_; }
  std::vector<Shape>& mutable_tuple_shapes() { return tuple_; }
  const Shape& tuple_shape(int64_t i) const { return tuple_[i]; }
  int64_t tuple_size() const { return static_cast<int64_t>(tuple_.size()); }

  bool has_layout() const { return layout_.has_value(); }
  const std::optional<Layout>& layout() const { return layout_; }
  void set_layout(std::optional<Layout> l) { layout_ = std::move(l); }
  // Minor-to-major order: the layout's if present, else descending (row-major).
  std::vector<int64_t> MinorToMajor() const;
  // True when the layout is absent or the default row-major order without tiles.
  bool HasDefaultLayout() const;

  int64_t ElementCount() const;  // product of dims (1 for scalars); 0 for non-arrays
  int64_t ByteSize() const;      // array bytes in hlox buffers; sum over leaves for tuples
  int64_t LeafCount() const;     // 1 for arrays/tokens, sum of leaves for tuples

  // HLO text, e.g. "f32[2,3]{1,0}" or "(f32[], s32[4]{0})"; layouts only when print_layout.
  std::string ToString(bool print_layout = true) const;

  // Full equality including layouts.
  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
  // Equal element types and dimensions (recursively), ignoring layouts and dynamism.
  bool Compatible(const Shape& o) const;
  // Compatible() and equal dims but element types may differ.
  bool SameDimensions(const Shape& o) const;

 private:
  PrimitiveType type_ = PrimitiveType::kTuple;
  std::vector<int64_t> dims_;
  std::vector<bool> dynamic_;
  std::vector<Shape> tuple_;
  std::optional<Layout> layout_;
};

std::string LayoutToString(const Layout& layout);

}  // namespace hlox
