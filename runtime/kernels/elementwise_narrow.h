// Narrow integers (s4, u4, s2, u2) for the elementwise kernels: traits that compute in 8 bits
// and wrap to the type's width on store, and a dispatcher that offers them to the opcodes
// whose results that gives correctly. Only kernels/elementwise.cc includes this.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "runtime/core/kernel_util.h"

namespace hlox::rt {

// s4/u4/s2/u2 live one per byte, sign- or zero-extended. They compute in 8 bits and wrap to
// their width on store, which for the ring ops, division, comparison, bitwise ops and the
// shifts below gives XLA's narrow-integer results (8-bit wrapping then 4-bit wrapping is
// 4-bit wrapping). The ops that see the storage width (clz, popcount, logical right shift)
// use the NarrowBits below to work on the low kBits bits only.
template <PrimitiveType PT, typename S, int kBits>
struct NarrowIntTraits {
  using Storage = S;
  using Compute = S;
  static constexpr PrimitiveType kType = PT;
  static constexpr int kNarrowBits = kBits;
  static Compute Load(Storage s) { return s; }
  static Storage Store(Compute c) {
    const unsigned low = static_cast<unsigned>(c) & ((1u << kBits) - 1);
    if constexpr (std::is_signed_v<S>) return static_cast<S>(static_cast<int>(low ^ (1u << (kBits - 1))) - (1 << (kBits - 1)));
    else return static_cast<S>(low);
  }
};
// The value width of traits `Tr`: kNarrowBits for the narrow integers, 0 (= the compute type's
// own width) for every other type.
template <typename Tr, typename = void>
struct NarrowBits : std::integral_constant<int, 0> {};
template <typename Tr>
struct NarrowBits<Tr, std::void_t<decltype(Tr::kNarrowBits)>> : std::integral_constant<int, Tr::kNarrowBits> {};

// The width-aware integer ops on a narrow value held in 8 bits (its low kBits bits count).
template <int kBits, typename S>
S NarrowClz(S x) {
  unsigned v = static_cast<unsigned>(static_cast<uint8_t>(x)) & ((1u << kBits) - 1), n = kBits;
  while (v) { v >>= 1; --n; }
  return static_cast<S>(n);
}
template <int kBits, typename S>
S NarrowPopCount(S x) {
  unsigned v = static_cast<unsigned>(static_cast<uint8_t>(x)) & ((1u << kBits) - 1), n = 0;
  for (; v; v &= v - 1) ++n;
  return static_cast<S>(n);
}
// XLA's logical right shift: an amount of kBits or more (as an unsigned kBits value) gives 0.
template <int kBits, typename S>
S NarrowShiftRightLogical(S x, S amount) {
  const unsigned mask = (1u << kBits) - 1;
  const unsigned a = static_cast<unsigned>(static_cast<uint8_t>(amount)) & mask;
  if (a >= static_cast<unsigned>(kBits)) return 0;
  return static_cast<S>((static_cast<unsigned>(static_cast<uint8_t>(x)) & mask) >> a);
}

template <PrimitiveType PT, typename S, int kBits>
struct NarrowTag {
  using Traits = NarrowIntTraits<PT, S, kBits>;
  static constexpr PrimitiveType kType = PT;
};

// True when computing `op` in 8 bits and wrapping gives XLA's narrow-integer result.
inline bool NarrowIntSupports(Opcode op) {
  switch (op) {
    case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
    case Opcode::kRemainder: case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kAnd:
    case Opcode::kOr: case Opcode::kXor: case Opcode::kPower: case Opcode::kCompare:
    case Opcode::kShiftLeft: case Opcode::kShiftRightArithmetic: case Opcode::kNegate:
    case Opcode::kAbs: case Opcode::kSign: case Opcode::kNot: case Opcode::kSelect: case Opcode::kClamp:
    case Opcode::kClz: case Opcode::kPopulationCount: case Opcode::kShiftRightLogical:
    case Opcode::kMulhi:
      return true;
    default:
      return false;
  }
}

// DispatchType plus the narrow integer types for the opcodes NarrowIntSupports allows.
template <typename F>
inline absl::Status DispatchElementwise(Opcode op, PrimitiveType t, F&& f) {
  switch (t) {
    case PrimitiveType::kS4: if (NarrowIntSupports(op)) return f(NarrowTag<PrimitiveType::kS4, int8_t, 4>{}); break;
    case PrimitiveType::kU4: if (NarrowIntSupports(op)) return f(NarrowTag<PrimitiveType::kU4, uint8_t, 4>{}); break;
    case PrimitiveType::kS2: if (NarrowIntSupports(op)) return f(NarrowTag<PrimitiveType::kS2, int8_t, 2>{}); break;
    case PrimitiveType::kU2: if (NarrowIntSupports(op)) return f(NarrowTag<PrimitiveType::kU2, uint8_t, 2>{}); break;
    default: break;
  }
  return DispatchType(t, "elementwise", std::forward<F>(f));
}

}  // namespace hlox::rt
