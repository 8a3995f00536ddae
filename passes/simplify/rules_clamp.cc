// Range-based clamp elimination for integers: clamp(lo, x, hi) -> x when x's value range is
// known to lie inside [lo, hi]. Ranges come from the type (unsigned >= 0), iota (0..n-1),
// constants, and replica-id/partition-id, whose range [0, N-1] comes from the module header's
// replica_count / num_partitions. Without that attribute hlox's execution semantics apply
// (SPEC, "Execution": collectives run single-replica), so the id is 0 — which is also what
// XLA's config said for the corpus's pass pairs, whose dumps lost the header counts.
#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "ir/computation.h"
#include "ir/module.h"
#include "passes/simplify/rule.h"
#include "passes/simplify/simp_util.h"

namespace hlox::simp {
namespace {

using Range = std::pair<int64_t, int64_t>;

// Min and max element of an integer constant (or broadcast of one); nullopt otherwise.
std::optional<Range> ConstantRange(const Instruction& i) {
  const Instruction* c = &i;
  if (c->opcode() == Opcode::kBroadcast && c->operand_count() == 1) c = c->operand(0);
  if (c->opcode() != Opcode::kConstant || !c->has_literal()) return std::nullopt;
  const Literal& lit = c->literal();
  PrimitiveType t = lit.shape().element_type();
  if (lit.elided() || !lit.shape().IsArray() || !IsInteger(t) || t == PrimitiveType::kU64) return std::nullopt;
  if (lit.element_count() == 0 ||
      lit.byte_size() < lit.element_count() * PrimitiveByteSize(t)) {
    return std::nullopt;
  }
  Range r{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  for (int64_t k = 0; k < lit.element_count(); ++k) {
    int64_t v = lit.GetAsInt64(k);
    r.first = std::min(r.first, v);
    r.second = std::max(r.second, v);
  }
  return r;
}

// [0, N-1] for replica-id (N = the header's replica_count) or partition-id (num_partitions);
// nullopt when the header does not say.
std::optional<Range> DeviceIdRange(const Instruction& i) {
  const char* key = i.opcode() == Opcode::kReplicaId ? "replica_count" : "num_partitions";
  const Module* m = i.parent() != nullptr ? i.parent()->parent() : nullptr;
  if (m == nullptr) return std::nullopt;
  for (const RawAttribute& a : m->header_attributes()) {
    int64_t n = 0;
    if (a.key == key && absl::SimpleAtoi(a.value, &n) && n >= 1) return Range{0, n - 1};
  }
  return std::nullopt;
}

// What is known about the values of integer instruction `i`.
std::optional<Range> ValueRange(const Instruction& i) {
  PrimitiveType t = i.shape().element_type();
  if (!i.shape().IsArray() || !IsInteger(t) || t == PrimitiveType::kU64) return std::nullopt;
  if (std::optional<Range> c = ConstantRange(i)) return c;
  switch (i.opcode()) {
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
      if (std::optional<Range> r = DeviceIdRange(i)) return r;
      return Range{0, 0};
    case Opcode::kIota: {
      int64_t d = i.attrs().iota_dimension;
      if (d < 0 || d >= i.shape().rank() || i.shape().dim(d) == 0) return std::nullopt;
      return Range{0, i.shape().dim(d) - 1};
    }
    default:
      break;
  }
  int bits = PrimitiveBitWidth(t);
  if (IsUnsignedInt(t)) return Range{0, (int64_t{1} << bits) - 1};
  if (bits >= 64) return Range{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  return Range{-(int64_t{1} << (bits - 1)), (int64_t{1} << (bits - 1)) - 1};
}

// clamp(lo, x, hi) -> x when range(x) lies within [max(lo), min(hi)]   (integers)
bool MatchClampInRange(const Instruction& i, std::vector<const Instruction*>*) {
  if (i.opcode() != Opcode::kClamp || i.operand_count() != 3 || !CanReplaceWith(i, *i.operand(1))) {
    return false;
  }
  std::optional<Range> lo = ConstantRange(*i.operand(0));
  std::optional<Range> hi = ConstantRange(*i.operand(2));
  std::optional<Range> x = ValueRange(*i.operand(1));
  return lo && hi && x && lo->second <= x->first && x->second <= hi->first;
}
Instruction* ApplyClampInRange(Instruction& i) { return i.operand(1); }

}  // namespace

void AddClampRules(std::vector<SimpRule>* rules) {
  rules->push_back({"clamp_in_range", MatchClampInRange, ApplyClampInRange});
}

}  // namespace hlox::simp
