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
  if (!layout_->tiles.empty() || !layout_->extra.empty()) return false;
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

std::string LayoutToString(const Layout& layout) {
  std::string out = absl::StrCat("{", absl::StrJoin(layout.minor_to_major, ","));
  if (!layout.tiles.empty() || !layout.extra.empty()) {
    out += ":";
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
    out += layout.extra;
  }
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
