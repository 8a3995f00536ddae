// Stable module hashing: FNV-1a over bytes in one lane and a multiply-rotate word hash in the
// other, each finished with the splitmix64 avalanche. Never depends on std::hash (which may differ
// between standard libraries).
#include "cost/module_hash.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_format.h"
#include "ir/printer.h"

namespace hlox {
namespace {

uint64_t Mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

}  // namespace

std::string HashText(std::string_view text) {
  uint64_t a = 0xcbf29ce484222325ull;  // FNV-1a offset basis
  for (unsigned char c : text) {
    a ^= c;
    a *= 0x100000001b3ull;
  }
  uint64_t b = 0x84222325cbf29ce4ull ^ text.size();
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, text.data() + i, 8);  // little-endian hosts only (x86-64, aarch64)
    b = Rotl(b ^ (w * 0x87c37b91114253d5ull), 31) * 0x4cf5ad432745937full;
  }
  uint64_t tail = 0;
  for (size_t k = 0; i + k < text.size(); ++k) {
    tail |= static_cast<uint64_t>(static_cast<unsigned char>(text[i + k])) << (8 * k);
  }
  b = Rotl(b ^ (tail * 0x87c37b91114253d5ull), 31) * 0x4cf5ad432745937full;
  return absl::StrFormat("%016x%016x", Mix(a), Mix(b ^ a));
}

std::string ModuleHash(const Module& module) {
  PrintOptions options;
  options.print_metadata = false;
  return HashText(PrintModule(module, options));
}

}  // namespace hlox
