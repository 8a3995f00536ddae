// Seeded values for entry parameters and elided constants. Counter-based (splitmix64 of the
// seed and the element index), so the bits depend only on (shape, seed) on every machine and
// library: no std::*_distribution anywhere. Floats are uniform in [-1, 1) (bf16 rounded), f16
// in [-1/8, 1/8): its range ends at 65504, which random [-1, 1) weights overflow within two
// layers of an 8-layer f16 Llama decoder (entangle_llama_decode_tp1_l8); integers in [0, 8) so
// they are valid indices most of the time, u32/u64 use the full range (they are mostly rng
// keys), pred is a random bit.
#include <string>

#include "runtime/core/executor.h"
#include "runtime/core/kernel_util.h"

namespace hlox::rt {
namespace {

inline uint64_t SplitMix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

inline float UnitF32(uint64_t x) { return static_cast<float>(x >> 40) * 0x1p-24f * 2.0f - 1.0f; }
constexpr float kF16Scale = 0.125f;  // see the top comment
inline double UnitF64(uint64_t x) { return static_cast<double>(x >> 11) * 0x1p-53 * 2.0 - 1.0; }

template <typename T, typename Gen>
void Fill(Buffer& b, uint64_t key, Gen gen) {
  T* p = b.as<T>();
  int64_t n = b.element_count();
  for (int64_t i = 0; i < n; ++i) p[i] = gen(SplitMix(key + static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ull), i);
}

}  // namespace

uint64_t MixSeed(uint64_t a, uint64_t b) { return SplitMix(SplitMix(a) ^ (b + 0x632be59bd9b4e019ull)); }

Value MakeSeededValue(const Shape& shape, uint64_t seed) {
  if (shape.IsTuple()) {
    std::vector<Value> elems;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      elems.push_back(MakeSeededValue(shape.tuple_shape(i), MixSeed(seed, static_cast<uint64_t>(i))));
    }
    return Value::Tuple(std::move(elems));
  }
  if (!shape.IsArray()) return Value::Token();
  auto buf = std::make_shared<Buffer>(shape);
  Buffer& b = *buf;
  uint64_t key = SplitMix(seed);
  auto small_int = [](uint64_t x, int64_t) { return static_cast<int>(x >> 61); };  // [0, 8)
  switch (shape.element_type()) {
    case PrimitiveType::kPred: Fill<uint8_t>(b, key, [](uint64_t x, int64_t) { return uint8_t(x >> 63); }); break;
    case PrimitiveType::kS8: Fill<int8_t>(b, key, small_int); break;
    case PrimitiveType::kS16: Fill<int16_t>(b, key, small_int); break;
    case PrimitiveType::kS32: Fill<int32_t>(b, key, small_int); break;
    case PrimitiveType::kS64: Fill<int64_t>(b, key, small_int); break;
    case PrimitiveType::kU8: Fill<uint8_t>(b, key, small_int); break;
    case PrimitiveType::kU16: Fill<uint16_t>(b, key, small_int); break;
    case PrimitiveType::kU32: Fill<uint32_t>(b, key, [](uint64_t x, int64_t) { return uint32_t(x >> 32); }); break;
    case PrimitiveType::kU64: Fill<uint64_t>(b, key, [](uint64_t x, int64_t) { return x; }); break;
    case PrimitiveType::kF16: Fill<uint16_t>(b, key, [](uint64_t x, int64_t) { return StoreHalf(kF16Scale * UnitF32(x)); }); break;
    case PrimitiveType::kBF16: Fill<uint16_t>(b, key, [](uint64_t x, int64_t) { return FloatToBf16(UnitF32(x)); }); break;
    case PrimitiveType::kF32: Fill<float>(b, key, [](uint64_t x, int64_t) { return UnitF32(x); }); break;
    case PrimitiveType::kF64: Fill<double>(b, key, [](uint64_t x, int64_t) { return UnitF64(x); }); break;
    case PrimitiveType::kC64:
      Fill<std::complex<float>>(b, key, [](uint64_t x, int64_t) {
        return std::complex<float>(UnitF32(x), UnitF32(SplitMix(x)));
      });
      break;
    case PrimitiveType::kC128:
      Fill<std::complex<double>>(b, key, [](uint64_t x, int64_t) {
        return std::complex<double>(UnitF64(x), UnitF64(SplitMix(x)));
      });
      break;
    default: {
      // Sub-byte ints and f8 types: go through a literal, which knows their encodings.
      Literal lit(shape);
      bool fp = IsFloatingPoint(shape.element_type());
      for (int64_t i = 0; i < lit.element_count(); ++i) {
        uint64_t x = SplitMix(key + static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ull);
        if (fp) {
          lit.SetFromDouble(i, UnitF32(x));
        } else {
          lit.SetFromInt64(i, static_cast<int64_t>(x >> 62));  // [0, 4) fits u2/s4
        }
      }
      if (b.byte_size() == lit.byte_size() && b.byte_size() > 0) std::memcpy(b.data(), lit.data(), b.byte_size());
      break;
    }
  }
  return Value::Array(std::move(buf));
}

std::vector<Value> MakeSeededInputs(const Module& module, uint64_t seed) {
  std::vector<Value> out;
  const Computation* entry = module.entry();
  if (entry == nullptr) return out;
  for (int64_t i = 0; i < entry->parameter_count(); ++i) {
    const Instruction* p = entry->parameter(i);
    out.push_back(MakeSeededValue(p ? p->shape() : Shape(), MixSeed(seed, static_cast<uint64_t>(i))));
  }
  return out;
}

Value ConstantValue(const Instruction& constant, uint64_t seed) {
  const Literal& lit = constant.literal();
  if (lit.elided()) return MakeSeededValue(constant.shape(), MixSeed(seed ^ 0x5eedc0de, Fnv1a(constant.name())));
  return ValueFromLiteral(lit);
}

}  // namespace hlox::rt
