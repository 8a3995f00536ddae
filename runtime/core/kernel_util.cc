// Shared kernel helpers (see core/kernel_util.h).
#include "runtime/core/kernel_util.h"

namespace hlox::rt {

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

bool NextIndex(std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

absl::StatusOr<const Buffer*> ArrayOperand(const Instruction& instr,
                                           const std::vector<const Value*>& operands, size_t i) {
  if (i >= operands.size() || operands[i] == nullptr || !operands[i]->is_array()) {
    return KernelError(instr, absl::StrCat("operand ", i, " is not an array value"));
  }
  return operands[i]->array.get();
}

int64_t ReadIndex(const Buffer& b, int64_t i) {
  switch (b.shape().element_type()) {
    case PrimitiveType::kPred:
    case PrimitiveType::kU8: return b.as<uint8_t>()[i];
    case PrimitiveType::kS8: return b.as<int8_t>()[i];
    case PrimitiveType::kS16: return b.as<int16_t>()[i];
    case PrimitiveType::kU16: return b.as<uint16_t>()[i];
    case PrimitiveType::kS32: return b.as<int32_t>()[i];
    case PrimitiveType::kU32: return b.as<uint32_t>()[i];
    case PrimitiveType::kS64: return b.as<int64_t>()[i];
    case PrimitiveType::kU64: return static_cast<int64_t>(b.as<uint64_t>()[i]);
    default: return 0;
  }
}

Value CloneValue(const Value& v) {
  if (v.is_tuple) {
    std::vector<Value> elems;
    for (const Value& e : v.tuple) elems.push_back(CloneValue(e));
    return Value::Tuple(std::move(elems));
  }
  if (!v.array) return Value::Token();
  auto b = std::make_shared<Buffer>(v.array->shape());
  if (b->byte_size() > 0) std::memcpy(b->data(), v.array->data(), b->byte_size());
  return Value::Array(std::move(b));
}

absl::Status KernelError(const Instruction& instr, std::string_view msg) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(OpcodeName(instr.opcode())), " ",
                                                 instr.name(), ": ", std::string(msg)));
}

bool ReadConfigInt(const std::string& config, std::string_view key, int64_t* out) {
  // `"key":`, matched in place (no string is built: this runs on every dot).
  size_t p = 0;
  for (;; ++p) {
    p = config.find(key, p);
    if (p == std::string::npos) return false;
    size_t end = p + key.size();
    if (p > 0 && config[p - 1] == '"' && end + 1 < config.size() && config[end] == '"' && config[end + 1] == ':') {
      p = end + 2;
      break;
    }
  }
  while (p < config.size() && config[p] == ' ') ++p;
  int64_t v = 0;
  bool any = false;
  while (p < config.size() && config[p] >= '0' && config[p] <= '9') {
    v = v * 10 + (config[p++] - '0');
    any = true;
    if (v > (int64_t{1} << 40)) return false;
  }
  if (any) *out = v;
  return any;
}

}  // namespace hlox::rt
