// Lookup functions over HLOX_OPCODE_LIST.
#include "ir/opcode.h"

#include <string>
#include <unordered_map>

namespace hlox {
namespace {

struct OpcodeInfo {
  std::string_view name;
  int arity;
  char kind;
};

constexpr OpcodeInfo kOpcodeInfo[] = {
#define HLOX_OPCODE_INFO(e, s, a, k) {s, a, k},
    HLOX_OPCODE_LIST(HLOX_OPCODE_INFO)
#undef HLOX_OPCODE_INFO
};

const OpcodeInfo& Info(Opcode op) { return kOpcodeInfo[static_cast<int>(op)]; }

}  // namespace

std::string_view OpcodeName(Opcode op) { return Info(op).name; }

std::optional<Opcode> ParseOpcode(std::string_view s) {
  static const auto* table = [] {
    auto* m = new std::unordered_map<std::string_view, Opcode>();
    for (int i = 0; i < kOpcodeCount; ++i) (*m)[kOpcodeInfo[i].name] = static_cast<Opcode>(i);
    return m;
  }();
  auto it = table->find(s);
  if (it == table->end()) return std::nullopt;
  return it->second;
}

int OpcodeArity(Opcode op) { return Info(op).arity; }
bool IsElementwiseUnary(Opcode op) { return Info(op).kind == 'u'; }
bool IsElementwiseBinary(Opcode op) { return Info(op).kind == 'b'; }
bool IsElementwise(Opcode op) {
  char k = Info(op).kind;
  return k == 'u' || k == 'b' || k == 't';
}

}  // namespace hlox
