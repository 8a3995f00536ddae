// Runtime values: buffers allocated from the process-wide pool (runtime/core/buffer_pool.h), and
// conversions between values and IR literals.
#include "runtime/core/value.h"

#include "runtime/core/buffer_pool.h"

namespace hlox::rt {

Buffer::Buffer(Shape shape) : shape_(std::move(shape)) {
  bytes_ = shape_.IsArray() ? shape_.ByteSize() : 0;
  data_ = PoolAllocate(bytes_);
}

Buffer::~Buffer() {
  if (base_ == nullptr && owns_) PoolRelease(data_, bytes_);
}

namespace {
thread_local Buffer* t_donor = nullptr;
}  // namespace

void OfferDonation(Buffer* donor) { t_donor = donor; }

BufferPtr NewOutputBuffer(const Shape& shape) {
  Buffer* d = t_donor;
  t_donor = nullptr;
  if (d == nullptr || !d->Donatable() || !shape.IsArray() ||
      d->shape_.element_type() != shape.element_type() || d->shape_.dims() != shape.dims()) {
    return std::make_shared<Buffer>(shape);
  }
  BufferPtr b(new Buffer());
  b->shape_ = shape;
  b->bytes_ = d->bytes_;
  b->data_ = d->data_;
  d->owns_ = false;  // the donor still reads the same bytes until it dies, but never frees them
  return b;
}

BufferPtr Buffer::View(BufferPtr base, Shape shape) {
  BufferPtr view(new Buffer());
  view->shape_ = std::move(shape);
  view->bytes_ = base->bytes_;
  view->data_ = base->data_;
  // A view of a view shares the original owner, so chains stay one level deep.
  view->base_ = base->base_ != nullptr ? base->base_ : std::move(base);
  return view;
}

void Value::Flatten(std::vector<BufferPtr>* out) const {
  if (is_tuple) {
    for (const Value& v : tuple) v.Flatten(out);
  } else if (array) {
    out->push_back(array);
  }
}

Value ValueFromLiteral(const Literal& literal) {
  const Shape& shape = literal.shape();
  if (shape.IsTuple()) {
    std::vector<Value> elems;
    for (const Literal& l : literal.tuple_elements()) elems.push_back(ValueFromLiteral(l));
    return Value::Tuple(std::move(elems));
  }
  if (!shape.IsArray()) return Value::Token();
  auto buf = std::make_shared<Buffer>(shape);
  if (!literal.elided() && literal.byte_size() == buf->byte_size()) {
    if (buf->byte_size() > 0) std::memcpy(buf->data(), literal.data(), buf->byte_size());
  } else if (buf->byte_size() > 0) {
    std::memset(buf->data(), 0, buf->byte_size());
  }
  return Value::Array(std::move(buf));
}

Literal LiteralFromValue(const Value& value, const Shape& shape) {
  if (shape.IsTuple()) {
    Literal lit(shape);
    for (int64_t i = 0; i < shape.tuple_size() && i < static_cast<int64_t>(value.tuple.size()); ++i) {
      lit.tuple_elements()[i] = LiteralFromValue(value.tuple[i], shape.tuple_shape(i));
    }
    return lit;
  }
  Literal lit(shape);
  if (value.array && value.array->byte_size() == lit.byte_size() && lit.byte_size() > 0) {
    std::memcpy(lit.data(), value.array->data(), lit.byte_size());
  }
  return lit;
}

}  // namespace hlox::rt
