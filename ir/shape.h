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

// A dimension's storage in a sparse layout (D(...) in text): 'D' dense, 'C' compressed,
// 'S' singleton, 'H' loosely compressed; '+' after it clears unique, '~' clears ordered.
struct DimLevel {
  char type = 'D';
  bool unique = true;
  bool ordered = true;
  bool operator==(const DimLevel&) const = default;
};

// SC(dimension:index,...): where a dimension is split in memory.
struct SplitConfig {
  int64_t dimension = 0;
  std::vector<int64_t> split_indices;
  bool operator==(const SplitConfig&) const = default;
};

// XLA's layout: minor-to-major order, then the items after ':' in XLA's fixed order
// D(..) T(..) L(n) #(type) *(type) E(n) S(n) SC(..) P(shape) M(n). Defaults are "absent".
struct Layout {
  std::vector<int64_t> minor_to_major;
  std::vector<DimLevel> dim_levels;  // empty: all dense
  std::vector<Tile> tiles;
  int64_t tail_padding_alignment = 1;                 // L(n)
  std::optional<PrimitiveType> index_type;            // #(u32): sparse index type
  std::optional<PrimitiveType> pointer_type;          // *(u32): sparse pointer type
  int64_t element_size_in_bits = 0;                   // E(n)
  int64_t memory_space = 0;                           // S(n)
  std::vector<SplitConfig> split_configs;             // SC(d:i,...)
  std::string physical_shape;                         // P(shape), the shape's text; sparse only
  int64_t dynamic_shape_metadata_prefix_bytes = 0;    // M(n)
  bool operator==(const Layout&) const = default;

  // True when some dimension is not dense.
  bool IsSparse() const;
  // True when nothing but minor_to_major is set.
  bool OnlyMinorToMajor() const;
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

// "{1,0:T(8,128)E(4)}": the layout as XLA writes it.
std::string LayoutToString(const Layout& layout);
// The items after ':' ("T(8,128)E(4)"), empty when there are none.
std::string LayoutItemsToString(const Layout& layout);

}  // namespace hlox
