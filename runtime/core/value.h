// Runtime values. An array value is a Buffer: a shape and 64-byte aligned memory holding the
// elements densely in logical row-major order, whatever the shape's layout says (layouts only
// matter to bitcast, whose kernel maps physical orders). A tuple value holds its elements.
// In-place donation: the executor may offer a dying operand's buffer to the kernel it runs;
// the kernel's output allocation (NewOutputBuffer) then adopts those bytes instead of fresh ones.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "ir/literal.h"
#include "ir/shape.h"

namespace hlox::rt {

class Buffer {
 public:
  // Allocates uninitialized memory for an array shape (from the process-wide buffer pool).
  explicit Buffer(Shape shape);
  ~Buffer();
  // A buffer of `shape` over `base`'s bytes (the byte sizes must match), keeping `base` alive:
  // reshape and bitcast without a layout change copy nothing. Sharing is safe because no
  // kernel writes into a value after making it.
  static std::shared_ptr<Buffer> View(std::shared_ptr<Buffer> base, Shape shape);
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  const Shape& shape() const { return shape_; }
  int64_t element_count() const { return shape_.ElementCount(); }
  int64_t byte_size() const { return bytes_; }
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  template <typename T> T* as() { return reinterpret_cast<T*>(data_); }
  template <typename T> const T* as() const { return reinterpret_cast<const T*>(data_); }
  // Whether this buffer owns its bytes and may give them away (not a view, not donated).
  bool Donatable() const { return base_ == nullptr && owns_; }

 private:
  friend std::shared_ptr<Buffer> NewOutputBuffer(const Shape& shape);
  Buffer() = default;

  Shape shape_;
  int64_t bytes_ = 0;
  uint8_t* data_ = nullptr;
  std::shared_ptr<Buffer> base_;  // a view's owner of the bytes; null when this buffer owns them
  bool owns_ = true;              // false once the bytes were donated to another buffer
};

using BufferPtr = std::shared_ptr<Buffer>;

// Offers `donor`'s bytes (or withdraws the offer, with nullptr) to the next NewOutputBuffer
// call on this thread. The executor offers only a buffer that nothing else holds or reads
// later, to a kernel whose every output element depends on the donor's element at the same
// index only (elementwise ops and fusions of them), so the kernel may overwrite as it reads.
void OfferDonation(Buffer* donor);
// The output buffer of the running kernel: the offered donor's bytes when the offer matches
// `shape` (same element type and dims; the offer is used up), else fresh pool memory.
std::shared_ptr<Buffer> NewOutputBuffer(const Shape& shape);

// Uninitialized scratch memory of `bytes` bytes (64-byte aligned) from the buffer pool, so a
// kernel's large temporaries reuse resident pages instead of page-faulting fresh ones per call.
inline BufferPtr ScratchBuffer(int64_t bytes) {
  return std::make_shared<Buffer>(Shape(PrimitiveType::kU8, {bytes}));
}

// An array buffer, a tuple of values, or a token (neither).
struct Value {
  BufferPtr array;
  std::vector<Value> tuple;
  bool is_tuple = false;

  static Value Array(BufferPtr b) { Value v; v.array = std::move(b); return v; }
  static Value Tuple(std::vector<Value> elems) { Value v; v.tuple = std::move(elems); v.is_tuple = true; return v; }
  static Value Token() { return Value(); }
  bool is_array() const { return array != nullptr; }
  // Array leaves in depth-first order.
  void Flatten(std::vector<BufferPtr>* out) const;
};

// Conversions between runtime values and IR literals (for constants, tests and tools).
Value ValueFromLiteral(const Literal& literal);
Literal LiteralFromValue(const Value& value, const Shape& shape);

}  // namespace hlox::rt
