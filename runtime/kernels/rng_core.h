// The counter-based generators behind rng, rng-bit-generator and the cuda_threefry2x32 custom
// call: Threefry-2x32 with 20 rounds exactly as JAX defines it (jax._src.prng.threefry2x32)
// and Philox-4x32-10 as in Random123. Both are pure functions of (key, counter).
#pragma once

#include <array>
#include <cstdint>

namespace hlox::rt {

inline uint32_t RotL32(uint32_t x, int d) { return (x << d) | (x >> (32 - d)); }

// Threefry-2x32, 20 rounds: (key0, key1) and counter words (x0, x1) -> two output words.
inline std::array<uint32_t, 2> Threefry2x32(uint32_t key0, uint32_t key1, uint32_t x0, uint32_t x1) {
  static constexpr int kRot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const uint32_t ks[3] = {key0, key1, key0 ^ key1 ^ 0x1BD11BDAu};
  x0 += ks[0];
  x1 += ks[1];
  for (int i = 0; i < 5; ++i) {
    const int* rot = kRot[i % 2];
    for (int r = 0; r < 4; ++r) {
      x0 += x1;
      x1 = RotL32(x1, rot[r]);
      x1 ^= x0;
    }
    x0 += ks[(i + 1) % 3];
    x1 += ks[(i + 2) % 3] + static_cast<uint32_t>(i + 1);
  }
  return {x0, x1};
}

// Philox-4x32-10: 128-bit counter c and 64-bit key k -> four output words.
inline std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> c, uint32_t k0, uint32_t k1) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kM0) * c[0];
    const uint64_t p1 = static_cast<uint64_t>(kM1) * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<uint32_t>(p0)};
    k0 += kW0;
    k1 += kW1;
  }
  return c;
}

}  // namespace hlox::rt
