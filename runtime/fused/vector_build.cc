// VectorProgram::Build (see fused/vector.h): flattening a fused program's f32 / bf16 / f16
// elementwise nodes into a straight-line op list over slots (streamed inputs, index-mapped
// inputs, scalars, temporaries), with a rounding op after each op whose result is bf16 or f16
// (dropped where only a narrowing store of the same type reads it), temporaries reused after
// their last use, and ops whose value only one f32 output takes storing straight into it.
#include "runtime/fused/vector.h"

#include <limits>

#include "common/fused_limits.h"
#include "runtime/fused/jit.h"
#include "runtime/fused/vector_ops.h"
#include "runtime/math/half.h"

namespace hlox::rt {
namespace {

using vecops::BinaryCode;
using vecops::UnaryCode;

int64_t Elements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// A value the op list refers to while it is built: an input, a scalar, or an op's result.
struct Ref {
  enum Kind : uint8_t { kInput, kScalar, kValue } kind = kInput;
  int64_t index = 0;
};

// An op of the list being built (operand b unused by unary ops).
struct Pending {
  uint8_t code;
  Ref a, b;
};

constexpr int64_t kMaxComputedSource = kMaxComputedSourceElements;  // common/fused_limits.h

// Types the register path holds in f32 registers.
bool RegisterType(PrimitiveType t) {
  return t == PrimitiveType::kF32 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF16;
}

// The op rounding to half type h (a code no op has for kNotHalf).
uint8_t RoundCode(uint8_t h) {
  return h == fused::kHalfBf16 ? vecops::kRoundBf16 : h == fused::kHalfF16 ? vecops::kRoundF16 : 0xff;
}

// Drops each rounding op that no op reads and only outputs of its own half type take: those
// outputs read the unrounded value instead (their narrowing store rounds it the same way).
// Renumbers the values after a dropped op in `pending` and `out_ref`.
void DropOutputRounds(const std::vector<FusedNode>& nodes, const std::vector<int>& outputs,
                      std::vector<Pending>& pending, std::vector<Ref>& out_ref) {
  std::vector<char> read(pending.size(), 0);  // read by an op, or by an output of another type
  for (const Pending& p : pending) {
    if (p.a.kind == Ref::kValue) read[p.a.index] = 1;
    if (!vecops::IsUnary(p.code) && p.b.kind == Ref::kValue) read[p.b.index] = 1;
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Ref& r = out_ref[k];
    if (r.kind == Ref::kValue && pending[r.index].code != RoundCode(fused::HalfTypeOf(nodes[outputs[k]].type))) {
      read[r.index] = 1;
    }
  }
  std::vector<char> keep(pending.size(), 1);
  for (Ref& r : out_ref) {
    if (r.kind != Ref::kValue || read[r.index]) continue;
    const uint8_t code = pending[r.index].code;
    if (code != vecops::kRoundBf16 && code != vecops::kRoundF16) continue;
    keep[r.index] = 0;
    r = pending[r.index].a;
  }
  std::vector<int64_t> renum(pending.size(), -1);
  std::vector<Pending> kept;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (!keep[i]) continue;
    renum[i] = static_cast<int64_t>(kept.size());
    kept.push_back(pending[i]);
  }
  auto fix = [&](Ref& r) {
    if (r.kind == Ref::kValue) r.index = renum[r.index];
  };
  for (Pending& p : kept) fix(p.a), fix(p.b);
  for (Ref& r : out_ref) fix(r);
  pending.swap(kept);
}

// Marks in (*need) the nodes the outputs need: 1 for a non-scalar node (an op or input), 2 for
// a scalar (evaluated once per run). False when one of them is not f32-held math of a register
// type over the outputs' element count `total`.
bool MarkNeeded(const std::vector<FusedNode>& nodes, const std::vector<int>& outputs, int64_t total,
                std::vector<char>* need_out) {
  const int64_t count = static_cast<int64_t>(nodes.size());
  std::vector<char>& need = *need_out;
  need.assign(count, 0);
  std::vector<int> stack(outputs.begin(), outputs.end());
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (need[id]) continue;
    const FusedNode& nd = nodes[id];
    if (nd.kind != VKind::kF32) return false;
    if (nd.dims.empty()) {
      need[id] = 2;
      continue;
    }
    if (!RegisterType(nd.type) || Elements(nd.dims) != total) {
      return false;
    }
    need[id] = 1;
    if (nd.op == NodeOp::kAffine && !nd.op_dims.empty()) continue;  // gathers its source
    for (int o : nd.operands) {
      if (o < 0 || o >= count) return false;
      stack.push_back(o);
    }
  }
  return true;
}

// The pending ops with their temporaries assigned: one per scalar (filled once), then op
// results reusing a temporary after its value's last use (outputs live to the end of the
// sub-block). direct[i]: the output op i may store straight into (in whole sub-blocks), when
// no other op reads its value and only that output takes it; -1 or -2 otherwise.
struct TempPlan {
  std::vector<VectorProgram::Op> ops;
  std::vector<VectorProgram::Slot> output_slots;  // where each output reads its value
  std::vector<int64_t> scalar_temps;
  std::vector<int64_t> direct;
  int64_t temps = 0;
};

TempPlan AssignTemporaries(const std::vector<Pending>& pending, const std::vector<Ref>& out_ref,
                           int64_t nscalars) {
  using Op = VectorProgram::Op;
  using Slot = VectorProgram::Slot;
  TempPlan plan;
  const int64_t nvals = static_cast<int64_t>(pending.size());
  constexpr int64_t kForever = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> last_use(nvals, -1);
  for (int64_t i = 0; i < nvals; ++i) {
    for (const Ref& r : {pending[i].a, pending[i].b}) {
      if (r.kind == Ref::kValue) last_use[r.index] = i;
    }
  }
  std::vector<int64_t>& direct = plan.direct;
  direct.assign(nvals, -2);  // -2: no output yet, -1: several, else the output
  for (size_t k = 0; k < out_ref.size(); ++k) {
    const Ref& r = out_ref[k];
    if (r.kind != Ref::kValue) continue;
    direct[r.index] = last_use[r.index] == -1 && direct[r.index] == -2 ? static_cast<int64_t>(k) : -1;
    last_use[r.index] = kForever;
  }
  int64_t temps = nscalars;
  for (int64_t s = 0; s < temps; ++s) plan.scalar_temps.push_back(s);
  std::vector<int64_t> value_temp(nvals, -1), free_temps;
  auto slot = [&](const Ref& r) {
    switch (r.kind) {
      case Ref::kInput: return Slot{true, r.index};
      case Ref::kScalar: return Slot{false, plan.scalar_temps[r.index]};
      default: return Slot{false, value_temp[r.index]};
    }
  };
  for (int64_t i = 0; i < nvals; ++i) {
    Op op;
    op.code = pending[i].code;
    op.a = slot(pending[i].a);
    op.b = slot(pending[i].b);
    // Operands whose last use is this op free their temporaries first (ops are elementwise:
    // writing a register's lanes where it was read is safe).
    for (const Ref& r : {pending[i].a, pending[i].b}) {
      if (r.kind == Ref::kValue && last_use[r.index] == i && value_temp[r.index] >= 0) {
        free_temps.push_back(value_temp[r.index]);
        value_temp[r.index] = -2 - value_temp[r.index];  // freed (kept distinct from -1)
      }
    }
    if (free_temps.empty()) {
      op.dst = temps++;
    } else {
      op.dst = free_temps.back();
      free_temps.pop_back();
    }
    value_temp[i] = op.dst;
    plan.ops.push_back(op);
  }
  for (const Ref& r : out_ref) plan.output_slots.push_back(slot(r));
  plan.temps = temps;
  return plan;
}

}  // namespace

std::unique_ptr<VectorProgram> VectorProgram::Build(const std::vector<FusedNode>& nodes,
                                                    const std::vector<int>& outputs) {
  if (outputs.empty()) return nullptr;
  const int64_t count = static_cast<int64_t>(nodes.size());
  for (int o : outputs) {
    if (o < 0 || o >= count || nodes[o].dims.empty()) return nullptr;
  }
  const int64_t total = Elements(nodes[outputs[0]].dims);
  // Nodes the outputs need: non-scalar ones become ops, scalars are evaluated once per run.
  std::vector<char> need;  // 1: op/input, 2: scalar
  if (!MarkNeeded(nodes, outputs, total, &need)) return nullptr;
  auto prog = std::unique_ptr<VectorProgram>(new VectorProgram());
  std::vector<Pending> pending;
  std::vector<Ref> ref(count);
  // Appends a rounding of node `id`'s value to its half type (none for f32), which becomes the
  // node's value.
  auto round_half = [&](int64_t id) {
    const uint8_t h = fused::HalfTypeOf(nodes[id].type);
    if (h == fused::kNotHalf) return;
    const Ref v = ref[id];
    ref[id] = Ref{Ref::kValue, static_cast<int64_t>(pending.size())};
    pending.push_back(Pending{RoundCode(h), v, v});
  };
  for (int64_t id = 0; id < count; ++id) {
    if (!need[id]) continue;
    const FusedNode& nd = nodes[id];
    if (need[id] == 2) {
      ref[id] = Ref{Ref::kScalar, static_cast<int64_t>(prog->scalar_nodes_.size())};
      prog->scalar_nodes_.push_back(static_cast<int>(id));
      continue;
    }
    auto operand = [&](size_t i) { return ref[nd.operands[i]]; };
    uint8_t code = 0;
    switch (nd.op) {
      case NodeOp::kParam:
        ref[id] = Ref{Ref::kInput, static_cast<int64_t>(prog->inputs_.size())};
        prog->inputs_.push_back(Input{nd.param, -1});
        prog->inputs_.back().half = fused::HalfTypeOf(nd.type);
        break;
      case NodeOp::kConstant:
        if (static_cast<int64_t>(nd.cf.size()) != total) return nullptr;
        ref[id] = Ref{Ref::kInput, static_cast<int64_t>(prog->inputs_.size())};
        prog->inputs_.push_back(Input{-1, static_cast<int>(id)});
        break;
      case NodeOp::kAffine: {
        if (nd.operands.size() != 1) return nullptr;
        if (nd.op_dims.empty()) {  // scalar broadcast
          ref[id] = operand(0);
          break;
        }
        // Index map of a parameter or constant (through reshapes): gathered per sub-block.
        int src = nd.operands[0];
        while (src >= 0 && src < count && nodes[src].op == NodeOp::kIdentity && nodes[src].operands.size() == 1) {
          src = nodes[src].operands[0];
        }
        if (src < 0 || src >= count || nd.map_dims.empty() || nd.map_dims.size() > 16) return nullptr;
        const FusedNode& sn = nodes[src];
        if (sn.kind != VKind::kF32 || !RegisterType(sn.type)) return nullptr;
        if (sn.op == NodeOp::kParam) {
          prog->inputs_.push_back(Input{sn.param, -1, static_cast<int>(id)});
          prog->inputs_.back().half = fused::HalfTypeOf(sn.type);
        } else if (sn.op == NodeOp::kConstant && static_cast<int64_t>(sn.cf.size()) == Elements(sn.dims)) {
          prog->inputs_.push_back(Input{-1, src, static_cast<int>(id)});
        } else if (Elements(sn.dims) <= kMaxComputedSource) {
          prog->inputs_.push_back(Input{-1, src, static_cast<int>(id), true});
        } else {
          return nullptr;
        }
        ref[id] = Ref{Ref::kInput, static_cast<int64_t>(prog->inputs_.size()) - 1};
        break;
      }
      case NodeOp::kIdentity:
        if (nd.operands.size() != 1) return nullptr;
        ref[id] = operand(0);
        break;
      case NodeOp::kConvert: {  // between f32, bf16 and f16: a rounding to a new half type
        if (nd.operands.size() != 1) return nullptr;
        const PrimitiveType from = nodes[nd.operands[0]].type;
        if (!RegisterType(from)) return nullptr;
        ref[id] = operand(0);
        if (nd.type != from) round_half(id);
        break;
      }
      case NodeOp::kUnary:
        if (nd.opcode == Opcode::kCopy && nd.operands.size() == 1) {
          ref[id] = operand(0);
          break;
        }
        if (nd.operands.size() != 1 || !UnaryCode(nd.opcode, &code)) return nullptr;
        ref[id] = Ref{Ref::kValue, static_cast<int64_t>(pending.size())};
        pending.push_back(Pending{code, operand(0), operand(0)});
        round_half(id);
        break;
      case NodeOp::kBinary:
        if (nd.operands.size() != 2 || !BinaryCode(nd.opcode, &code)) return nullptr;
        ref[id] = Ref{Ref::kValue, static_cast<int64_t>(pending.size())};
        pending.push_back(Pending{code, operand(0), operand(1)});
        round_half(id);
        break;
      default:
        return nullptr;
    }
  }
  // Where each output reads its value. A rounding that no op reads and only outputs of its
  // own half type take is left to their narrowing stores, which round the same way.
  std::vector<Ref> out_ref;
  for (int o : outputs) out_ref.push_back(ref[o]);
  DropOutputRounds(nodes, outputs, pending, out_ref);
  TempPlan plan = AssignTemporaries(pending, out_ref, static_cast<int64_t>(prog->scalar_nodes_.size()));
  prog->ops_ = std::move(plan.ops);
  prog->output_slots_ = std::move(plan.output_slots);
  prog->scalar_temps_ = std::move(plan.scalar_temps);
  const std::vector<int64_t>& direct = plan.direct;
  const int64_t nvals = static_cast<int64_t>(pending.size());
  for (size_t k = 0; k < outputs.size(); ++k) prog->out_half_.push_back(fused::HalfTypeOf(nodes[outputs[k]].type));
  prog->direct_.assign(outputs.size(), 0);
  for (int64_t i = 0; i < nvals; ++i) {
    if (direct[i] < 0 || prog->out_half_[direct[i]] != fused::kNotHalf) continue;
    prog->ops_[i].out = direct[i];
    prog->direct_[direct[i]] = 1;
  }
  prog->temps_ = plan.temps;
  // The plain path (every input an f32 array read in place, f32 outputs), as machine code.
  prog->plain_ = true;
  for (const Input& in : prog->inputs_) prog->plain_ = prog->plain_ && in.affine < 0 && in.half == 0 && !in.computed;
  for (uint8_t h : prog->out_half_) prog->plain_ = prog->plain_ && h == 0;
  if (prog->plain_) {
    prog->jit_ = FusedJit::Compile(prog->ops_, static_cast<int64_t>(prog->inputs_.size()), prog->scalar_temps_,
                                   prog->output_slots_, ActiveIsa());
  }
  return prog;
}

int64_t VectorProgram::jit_code_bytes_for(IsaLevel level) const {
  if (!plain_) return 0;
  auto jit = FusedJit::Compile(ops_, static_cast<int64_t>(inputs_.size()), scalar_temps_, output_slots_, level);
  return jit != nullptr ? jit->code_bytes() : 0;
}

}  // namespace hlox::rt
