// Kernel view construction: alias resolution to tensors and per-kernel read/write sets.
#include "cost/kernel_model.h"

#include <algorithm>
#include <functional>

#include "cost/fused_flops.h"
#include "ir/alias_ops.h"

namespace hlox {
namespace {

// Array (and token) leaves of a shape with their byte sizes, depth-first.
void LeafBytes(const Shape& s, std::vector<double>* out) {
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes()) LeafBytes(e, out);
  } else {
    out->push_back(s.IsArray() ? static_cast<double>(s.ByteSize()) : 0.0);
  }
}

// Bytes a slice-like consumer reads from its operand 0: what it produces.
bool IsSliceLike(const Instruction& i, int64_t operand_index) {
  switch (i.opcode()) {
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kGather: return operand_index == 0;
    default: return false;
  }
}

// Bytes a fusion reads from its parameter `p`: the whole tensor, unless every fused user is
// slice-like on it, then what those users produce.
double FusedParameterReadBytes(const Instruction& p, double full) {
  if (p.users().empty()) return 0;
  double sum = 0;
  for (const Instruction* u : p.users()) {
    bool sliced = false;
    for (int64_t k = 0; k < u->operand_count(); ++k) {
      if (u->operand(k) == &p) sliced = IsSliceLike(*u, k);
    }
    if (!sliced) return full;
    sum += static_cast<double>(u->shape().ByteSize());
  }
  return std::min(sum, full);
}

}  // namespace

double Kernel::ReadBytes() const {
  double s = 0;
  for (const auto& r : reads) s += r.bytes;
  return s;
}

double Kernel::WriteBytes() const {
  double s = 0;
  for (const auto& w : writes) s += w.bytes;
  return s;
}

bool IsControlFlowOp(const Instruction& instr) {
  switch (instr.opcode()) {
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall: return true;
    default: return false;
  }
}

KernelKind KernelKindOf(const Instruction& instr) {
  const Opcode op = instr.opcode();
  switch (op) {
    case Opcode::kFusion: {
      if (instr.to_apply() == nullptr) return KernelKind::kOther;
      switch (FusedPathOf(*instr.to_apply())) {
        case FusedPath::kRegister: return KernelKind::kFusionRegister;
        case FusedPath::kBlock: return KernelKind::kFusionBlock;
        case FusedPath::kReduce: return KernelKind::kFusionReduce;
        default: return KernelKind::kOther;
      }
    }
    case Opcode::kExp: case Opcode::kExpm1: case Opcode::kLog: case Opcode::kLog1p:
    case Opcode::kLogistic: case Opcode::kTanh: case Opcode::kSin: case Opcode::kCos:
    case Opcode::kTan: case Opcode::kErf: case Opcode::kAtan2: case Opcode::kPower:
    case Opcode::kRsqrt: case Opcode::kSqrt: case Opcode::kCbrt: case Opcode::kAcos: case Opcode::kAtan:
    case Opcode::kAcosh: case Opcode::kAsin: case Opcode::kAsinh: case Opcode::kAtanh:
    case Opcode::kCosh: case Opcode::kSinh:
      return KernelKind::kTranscendental;
    case Opcode::kBroadcast: case Opcode::kIota: return KernelKind::kBroadcast;
    case Opcode::kCopy: case Opcode::kTranspose: case Opcode::kReshape: case Opcode::kReverse:
      return KernelKind::kCopy;
    case Opcode::kReduce: case Opcode::kReduceWindow: return KernelKind::kReduce;
    case Opcode::kSlice: case Opcode::kConcatenate: case Opcode::kPad:
      return KernelKind::kSliceConcat;
    case Opcode::kDynamicSlice: case Opcode::kDynamicUpdateSlice: case Opcode::kGather:
    case Opcode::kScatter:
      return KernelKind::kDynamicSlice;
    case Opcode::kDot: case Opcode::kConvolution: case Opcode::kRaggedDot: case Opcode::kScaledDot:
      return KernelKind::kDot;
    default: break;
  }
  if (IsElementwise(op)) return KernelKind::kElementwise;
  return KernelKind::kOther;
}

ElementClass ElementClassOf(const Instruction& instr) {
  const Shape& s = instr.opcode() == Opcode::kCompare && instr.operand_count() > 0
                       ? instr.operand(0)->shape() : instr.shape();
  if (!s.IsArray()) return ElementClass::kFloat;
  const PrimitiveType t = s.element_type();
  if (IsInteger(t) || IsPred(t)) return ElementClass::kInteger;
  if (t == PrimitiveType::kBF16 || t == PrimitiveType::kF16) return ElementClass::kHalf;
  return ElementClass::kFloat;
}

bool IsFusedMoveOp(const Instruction& instr) {
  switch (instr.opcode()) {
    case Opcode::kSlice: case Opcode::kConcatenate: case Opcode::kPad: case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice: case Opcode::kGather: case Opcode::kReverse:
    case Opcode::kTranspose: return true;
    default: return false;
  }
}

FusedOpMix FusedOpMixOf(const Computation& fused) {
  FusedOpMix mix;
  for (const auto& i : fused.instructions()) {
    const Opcode op = i->opcode();
    if (op == Opcode::kParameter || op == Opcode::kConstant || op == Opcode::kTuple) continue;
    ++mix.count[static_cast<int>(ElementClassOf(*i))];
    mix.moves += IsFusedMoveOp(*i);
  }
  return mix;
}

KernelModel BuildKernelModel(const Computation& computation) {
  KernelModel m;
  std::unordered_map<const Instruction*, std::vector<TensorAccess>> resolved;
  auto own = [&](const Instruction* i) {
    std::vector<double> bytes;
    LeafBytes(i->shape(), &bytes);
    std::vector<TensorAccess> t;
    for (size_t k = 0; k < bytes.size(); ++k) {
      TensorId id{i, static_cast<int64_t>(k)};
      t.push_back({id, bytes[k]});
      m.tensor_bytes[id] = bytes[k];
    }
    return t;
  };
  for (const Instruction* i : computation.PostOrder()) {
    std::vector<TensorAccess> r;
    switch (i->opcode()) {
      case Opcode::kTuple:
        for (const Instruction* op : i->operands()) {
          const auto& o = resolved[op];
          r.insert(r.end(), o.begin(), o.end());
        }
        break;
      case Opcode::kGetTupleElement: {
        const Instruction* op = i->operand(0);
        const auto& o = resolved[op];
        int64_t offset = 0;
        const Shape& s = op->shape();
        int64_t idx = i->tuple_index();
        if (s.IsTuple() && idx >= 0 && idx < s.tuple_size()) {
          for (int64_t k = 0; k < idx; ++k) offset += s.tuple_shape(k).LeafCount();
          int64_t count = s.tuple_shape(idx).LeafCount();
          if (offset + count <= static_cast<int64_t>(o.size())) {
            r.assign(o.begin() + offset, o.begin() + offset + count);
          }
        }
        break;
      }
      case Opcode::kBitcast:
      case Opcode::kOptimizationBarrier:
      case Opcode::kDomain:
      case Opcode::kAddDependency:
        if (i->operand_count() > 0) r = resolved[i->operand(0)];
        break;
      case Opcode::kAfterAll: break;
      default: r = IsSharedIdentityCall(*i) ? resolved[i->operand(0)] : own(i); break;
    }
    resolved[i] = r;
    if (IsAliasInstruction(*i)) continue;  // ir/alias_ops.h: no kernel, no traffic
    Kernel k;
    k.instr = i;
    k.control_flow = IsControlFlowOp(*i);
    k.writes = resolved[i];
    for (int64_t n = 0; n < i->operand_count(); ++n) {
      k.operand_tensors.push_back(resolved[i->operand(n)]);
      for (TensorAccess a : resolved[i->operand(n)]) {
        if (IsSliceLike(*i, n)) {
          a.bytes = std::min(a.bytes, static_cast<double>(i->shape().ByteSize()));
        } else if (i->opcode() == Opcode::kFusion && i->to_apply() &&
                   n < i->to_apply()->parameter_count()) {
          a.bytes = FusedParameterReadBytes(*i->to_apply()->parameter(n), a.bytes);
        } else if (i->opcode() == Opcode::kDynamicUpdateSlice && n == 0) {
          a.bytes = 0;  // updated in place
        }
        auto same = [&](const TensorAccess& x) { return x.tensor == a.tensor; };
        auto it = std::find_if(k.reads.begin(), k.reads.end(), same);
        if (it == k.reads.end()) {
          k.reads.push_back(a);
        } else {
          it->bytes = std::max(it->bytes, a.bytes);
        }
      }
    }
    if (i->opcode() == Opcode::kDynamicUpdateSlice && i->operand_count() > 1) {
      for (auto& w : k.writes) w.bytes = std::min(w.bytes, static_cast<double>(i->operand(1)->shape().ByteSize()));
    }
    m.kernels.push_back(std::move(k));
  }
  if (computation.root()) m.outputs = resolved[computation.root()];
  return m;
}

}  // namespace hlox
