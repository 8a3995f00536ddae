// rng and rng-bit-generator. rng draws from Philox-4x32-10 keyed by the run seed and a hash of
// the instruction's name, one counter per element, so every run, thread count and machine
// gives the same bits. rng-bit-generator implements XLA's algorithms on its state operand:
// rng_three_fry (key = state[0], 64-bit counter = state[1]) and rng_philox / rng_default
// (key = state[0], 128-bit counter = state[1], state[2]); it returns (new_state, bits) with the
// counter advanced past the blocks used. The bit stream layout is hlox's own (not promised to
// match XLA's bit for bit).
#include <cmath>
#include <numbers>
#include <string>

#include "runtime/kernels/rng_core.h"
#include "runtime/kernels/scalar_access.h"

namespace hlox::rt {
namespace {

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// Two 32-bit words for element i of a Philox stream keyed by `key`.
std::array<uint32_t, 4> Block(uint64_t key, uint64_t i) {
  return Philox4x32({static_cast<uint32_t>(i), static_cast<uint32_t>(i >> 32), 0, 0},
                    static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
}

absl::StatusOr<Value> Rng(const Instruction& instr, const std::vector<const Value*>& operands,
                          KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* a, ArrayOperand(instr, operands, 0));
  HLOX_ASSIGN_OR_RETURN(const Buffer* b, ArrayOperand(instr, operands, 1));
  const Shape& os = instr.shape();
  if (!os.IsArray() || !IsRealType(os.element_type()) || a->element_count() != 1 || b->element_count() != 1) {
    return KernelError(instr, "rng needs scalar parameters and a real array result");
  }
  const bool normal = instr.attrs().distribution == RandomDistribution::kNormal;
  const uint64_t key = ctx.seed * 0x9E3779B97F4A7C15ull ^ Fnv1a(instr.name());
  const double pa = LoadDouble(*a, 0), pb = LoadDouble(*b, 0);
  const PrimitiveType t = os.element_type();
  const bool is_float = IsFloatingPoint(t);
  if (!is_float && normal) return KernelError(instr, "normal distribution needs a float type");
  Value out = NewArray(os);
  Buffer& ob = *out.array;
  KernelParallelFor(ctx, ob.element_count(), 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const std::array<uint32_t, 4> w = Block(key, static_cast<uint64_t>(i));
      const uint64_t bits64 = (static_cast<uint64_t>(w[0]) << 32) | w[1];
      if (normal) {
        const double u1 = (static_cast<double>(w[0] >> 8) + 1.0) * 0x1p-24;  // (0, 1]
        const double u2 = static_cast<double>(w[1] >> 8) * 0x1p-24;
        const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
        StoreDouble(ob, i, pa + pb * z);
      } else if (is_float) {
        const double u = static_cast<double>(bits64 >> 11) * 0x1p-53;  // [0, 1)
        double v = pa + (pb - pa) * u;
        StoreDouble(ob, i, v);
        if (LoadDouble(ob, i) >= pb && pb > pa) StoreDouble(ob, i, pa);  // keep [a, b)
      } else {
        const double span = pb - pa;
        const double v = span > 0 ? pa + static_cast<double>(bits64 % static_cast<uint64_t>(span)) : pa;
        StoreDouble(ob, i, v);
      }
    }
  });
  return out;
}

absl::StatusOr<Value> RngBitGenerator(const Instruction& instr, const std::vector<const Value*>& operands,
                                      KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* state, ArrayOperand(instr, operands, 0));
  const Shape& os = instr.shape();
  if (!os.IsTuple() || os.tuple_size() != 2 || !os.tuple_shape(1).IsArray() ||
      state->shape().element_type() != PrimitiveType::kU64 || state->element_count() < 2) {
    return KernelError(instr, "rng-bit-generator needs a u64 state of >= 2 words and a (state, bits) result");
  }
  const uint64_t* s = state->as<uint64_t>();
  const std::string& alg = instr.attrs().rng_algorithm;
  const bool threefry = alg == "rng_three_fry";
  Value new_state = CloneValue(*operands[0]);
  Value bits = NewArray(os.tuple_shape(1));
  const int64_t bytes = bits.array->byte_size();
  const int64_t block_bytes = threefry ? 8 : 16;
  const int64_t blocks = (bytes + block_bytes - 1) / block_bytes;
  const uint32_t k0 = static_cast<uint32_t>(s[0]), k1 = static_cast<uint32_t>(s[0] >> 32);
  const uint64_t c_lo = s[1], c_hi = state->element_count() > 2 ? s[2] : 0;
  uint8_t* dst = bits.array->data();
  KernelParallelFor(ctx, blocks, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) {
      uint32_t words[4];
      if (threefry) {
        const uint64_t c = c_lo + static_cast<uint64_t>(j);
        auto r = Threefry2x32(k0, k1, static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32));
        words[0] = r[0];
        words[1] = r[1];
      } else {
        const uint64_t lo = c_lo + static_cast<uint64_t>(j);
        const uint64_t hi = c_hi + (lo < c_lo ? 1 : 0);
        auto r = Philox4x32({static_cast<uint32_t>(lo), static_cast<uint32_t>(lo >> 32),
                             static_cast<uint32_t>(hi), static_cast<uint32_t>(hi >> 32)}, k0, k1);
        for (int w = 0; w < 4; ++w) words[w] = r[w];
      }
      const int64_t off = j * block_bytes;
      std::memcpy(dst + off, words, std::min<int64_t>(block_bytes, bytes - off));
    }
  });
  uint64_t* ns = new_state.array->as<uint64_t>();
  const uint64_t lo = c_lo + static_cast<uint64_t>(blocks);
  ns[1] = lo;
  if (!threefry && state->element_count() > 2 && lo < c_lo) ns[2] = c_hi + 1;
  return Value::Tuple({new_state, bits});
}

}  // namespace

absl::StatusOr<Value> RngKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                KernelContext& ctx) {
  if (instr.opcode() == Opcode::kRngBitGenerator) return RngBitGenerator(instr, operands, ctx);
  return Rng(instr, operands, ctx);
}

}  // namespace hlox::rt
