// Shape helpers and the canonical text form of shapes and layouts.
#include "ir/shape.h"

#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hlox {

Shape::Shape(PrimitiveType type, std::vector<int64_t> dims) : type_(type), dims_(std::move(dims)) {}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.type_ = PrimitiveType::kTuple;
  s.tuple_ = std::move(elements);
  return s;
}

Shape Shape::Token() {
  Shape s;
  s.type_ = PrimitiveType::kToken;
  return s;
}

Shape Shape::WithDefaultLayout(PrimitiveType type, std::vector<int64_t> dims) {
  Shape s(type, std::move(dims));
  Layout l;
  for (int64_t i = s.rank() - 1; i >= 0; --i) l.minor_to_major.push_back(i);
  s.set_layout(std::move(l));
  return s;
}

std::vector<int64_t> Shape::MinorToMajor() const {
  if (layout_ && static_cast<int64_t>(layout_->minor_to_major.size()) == rank()) {
    return layout_->minor_to_major;
  }
  std::vector<int64_t> m;
  for (int64_t i = rank() - 1; i >= 0; --i) m.push_back(i);
  return m;
}

bool Shape::HasDefaultLayout() const {
  if (!layout_) return true;
  if (!layout_->OnlyMinorToMajor()) return false;
  if (layout_->minor_to_major.empty()) return true;
  int64_t n = static_cast<int64_t>(layout_->minor_to_major.size());
  for (int64_t i = 0; i < n; ++i) {
    if (layout_->minor_to_major[i] != n - 1 - i) return false;
  }
  return true;
}

int64_t Shape::ElementCount() const {
  if (!IsArray()) return 0;
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

int64_t Shape::ByteSize() const {
  if (IsTuple()) {
    int64_t b = 0;
    for (const Shape& s : tuple_) b += s.ByteSize();
    return b;
  }
  return ElementCount() * PrimitiveByteSize(type_);
}

int64_t Shape::LeafCount() const {
  if (!IsTuple()) return 1;
  int64_t n = 0;
  for (const Shape& s : tuple_) n += s.LeafCount();
  return n;
}

bool Layout::IsSparse() const {
  for (const DimLevel& d : dim_levels) {
    if (d.type != 'D') return true;
  }
  return false;
}

bool Layout::OnlyMinorToMajor() const {
  Layout plain;
  plain.minor_to_major = minor_to_major;
  return *this == plain;
}

std::string LayoutItemsToString(const Layout& layout) {
  std::string out;
  if (!layout.dim_levels.empty()) {
    out += "D(";
    for (size_t i = 0; i < layout.dim_levels.size(); ++i) {
      const DimLevel& d = layout.dim_levels[i];
      absl::StrAppend(&out, i ? "," : "", std::string(1, d.type), d.unique ? "" : "+", d.ordered ? "" : "~");
    }
    out += ")";
  }
  // XLA writes the first tile with a 'T' and the nested ones after it: T(8,128)(2,1).
  if (!layout.tiles.empty()) out += "T";
  for (const Tile& t : layout.tiles) {
    out += "(";
    for (size_t i = 0; i < t.dims.size(); ++i) {
      if (i) out += ",";
      out += t.dims[i] < 0 ? std::string("*") : std::to_string(t.dims[i]);
    }
    out += ")";
  }
  if (layout.tail_padding_alignment != 1) absl::StrAppend(&out, "L(", layout.tail_padding_alignment, ")");
  if (layout.index_type) absl::StrAppend(&out, "#(", std::string(PrimitiveTypeName(*layout.index_type)), ")");
  if (layout.pointer_type) absl::StrAppend(&out, "*(", std::string(PrimitiveTypeName(*layout.pointer_type)), ")");
  if (layout.element_size_in_bits != 0) absl::StrAppend(&out, "E(", layout.element_size_in_bits, ")");
  if (layout.memory_space != 0) absl::StrAppend(&out, "S(", layout.memory_space, ")");
  if (!layout.split_configs.empty()) out += "SC";
  for (const SplitConfig& c : layout.split_configs) {
    absl::StrAppend(&out, "(", c.dimension, ":", absl::StrJoin(c.split_indices, ","), ")");
  }
  if (!layout.physical_shape.empty()) absl::StrAppend(&out, "P(", layout.physical_shape, ")");
  if (layout.dynamic_shape_metadata_prefix_bytes != 0) {
    absl::StrAppend(&out, "M(", layout.dynamic_shape_metadata_prefix_bytes, ")");
  }
  return out;
}

std::string LayoutToString(const Layout& layout) {
  std::string out = absl::StrCat("{", absl::StrJoin(layout.minor_to_major, ","));
  std::string items = LayoutItemsToString(layout);
  if (!items.empty()) absl::StrAppend(&out, ":", items);
  out += "}";
  return out;
}

std::string Shape::ToString(bool print_layout) const {
  if (IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (i) out += ", ";
      out += tuple_[i].ToString(print_layout);
    }
    return out + ")";
  }
  if (!IsArray()) return std::string(PrimitiveTypeName(type_));
  std::string out = std::string(PrimitiveTypeName(type_)) + "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) out += ",";
    if (is_dynamic_dim(i)) out += "<=";
    out += std::to_string(dims_[i]);
  }
  out += "]";
  if (print_layout && layout_) out += LayoutToString(*layout_);
  return out;
}

bool Shape::operator==(const Shape& o) const {
  return type_ == o.type_ && dims_ == o.dims_ && dynamic_ == o.dynamic_ && tuple_ == o.tuple_ &&
         layout_ == o.layout_;
}

bool Shape::SameDimensions(const Shape& o) const {
  if (IsTuple() != o.IsTuple()) return false;
  if (IsTuple()) {
    if (tuple_.size() != o.tuple_.size()) return false;
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (!tuple_[i].SameDimensions(o.tuple_[i])) return false;
    }
    return true;
  }
  return dims_ == o.dims_;
}

bool Shape::Compatible(const Shape& o) const {
  if (type_ != o.type_) return false;
  if (IsTuple()) {
    if (tuple_.size() != o.tuple_.size()) return false;
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (!tuple_[i].Compatible(o.tuple_[i])) return false;
    }
    return true;
  }
  return dims_ == o.dims_;
}

}  // namespace hlox
