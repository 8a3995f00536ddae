// FusedLoopFlops and FusedLoopSupported (rules in fused_flops.h): which of the runtime's fused
// loop paths a fused computation takes, then a walk that charges each node once per distinct
// index set the runtime evaluates it on (a context: the output's blocks, or a fresh set an
// index map asks its operand for).
#include "cost/fused_flops.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/fused_limits.h"
#include "cost/analytical.h"

namespace hlox {
namespace {

// The runtime's thresholds, read from the header its fused evaluators use.
constexpr double kMaxHoisted = rt::kMaxHoistedElements;
constexpr double kMaxComputedSource = rt::kMaxComputedSourceElements;
constexpr double kBlock = rt::kDefaultBlockElements, kMinBlock = rt::kMinElementwiseBlock,
                 kL1Budget = rt::kElementwiseBlockBytes;
// Bound on (node, context) visits; beyond it new contexts are merged into their parent's
// (under-counts recomputation instead of walking an exponential number of paths).
constexpr int64_t kMaxVisits = 1 << 20;

double Elements(const Shape& s) { return static_cast<double>(std::max<int64_t>(1, s.ElementCount())); }

bool IsScalar(const Instruction& i) { return i.shape().IsArray() && i.shape().rank() == 0; }

bool IsLeaf(const Instruction& i) {
  return i.opcode() == Opcode::kParameter || i.opcode() == Opcode::kConstant;
}

bool BlockType(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF32: case PrimitiveType::kBF16: case PrimitiveType::kF16:
    case PrimitiveType::kF64: case PrimitiveType::kPred: case PrimitiveType::kS8:
    case PrimitiveType::kS16: case PrimitiveType::kS32: case PrimitiveType::kS64:
    case PrimitiveType::kU8: case PrimitiveType::kU16: case PrimitiveType::kU32: return true;
    default: return false;
  }
}

bool RegisterType(PrimitiveType t) {
  return t == PrimitiveType::kF32 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF16;
}

bool FloatKind(PrimitiveType t) { return RegisterType(t) || t == PrimitiveType::kF64; }

// A reducer the fused reduce implements: one add/mul/max/min/and/or of its two parameters.
bool SimpleReducer(const Computation* c) {
  if (c == nullptr || c->parameter_count() != 2 || c->root() == nullptr) return false;
  const Instruction* r = c->root();
  if (r->operand_count() != 2 || r->operand(0)->opcode() != Opcode::kParameter ||
      r->operand(1)->opcode() != Opcode::kParameter) {
    return false;
  }
  switch (r->opcode()) {
    case Opcode::kAdd: case Opcode::kMultiply: case Opcode::kMaximum: case Opcode::kMinimum:
      return true;
    case Opcode::kAnd: case Opcode::kOr: return !FloatKind(r->shape().element_type());
    default: return false;
  }
}

// Instructions reachable from the root, in post order.
std::vector<const Instruction*> LiveOrder(const Computation& c) {
  std::unordered_set<const Instruction*> live{c.root()};
  std::vector<Instruction*> order = c.PostOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (!live.count(*it)) continue;
    for (const Instruction* op : (*it)->operands()) live.insert(op);
  }
  std::vector<const Instruction*> out;
  for (const Instruction* i : order) {
    if (live.count(i)) out.push_back(i);
  }
  return out;
}

std::vector<const Instruction*> Outputs(const Computation& c) {
  const Instruction* root = c.root();
  if (root->opcode() == Opcode::kTuple) return {root->operands().begin(), root->operands().end()};
  return {root};
}

bool IsIndexMap(Opcode op) {
  switch (op) {
    case Opcode::kBroadcast: case Opcode::kTranspose: case Opcode::kSlice: case Opcode::kReverse:
    case Opcode::kDynamicSlice: return true;
    default: return false;
  }
}

// The register path's Build (fused/vector_build.cc): every node the outputs need is f32-kind;
// non-scalar ones have the outputs' element count and are parameters, full constants,
// reshapes, float converts, vector unary/binary ops or index maps of a parameter, constant
// or computed value of at most kMaxComputedSource elements. Transposes take the tiled walk.
bool RegisterPath(const std::vector<const Instruction*>& outputs) {
  if (outputs.empty()) return false;
  const double total = Elements(outputs[0]->shape());
  std::unordered_set<const Instruction*> seen;
  std::vector<const Instruction*> stack(outputs.begin(), outputs.end());
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    if (!seen.insert(i).second) continue;
    if (!i->shape().IsArray() || !RegisterType(i->shape().element_type())) return false;
    if (IsScalar(*i)) continue;  // evaluated once per run by the block evaluator
    if (Elements(i->shape()) != total) return false;
    switch (i->opcode()) {
      case Opcode::kParameter: case Opcode::kConstant: case Opcode::kReshape:
      case Opcode::kConvert: case Opcode::kCopy:
        break;
      case Opcode::kBitcast:
        if (!i->shape().HasDefaultLayout() || !i->operand(0)->shape().HasDefaultLayout()) return false;
        break;
      case Opcode::kBroadcast: case Opcode::kSlice: case Opcode::kReverse: {
        const Instruction* src = i->operand(0);
        if (IsScalar(*src)) break;
        while (src->opcode() == Opcode::kReshape) src = src->operand(0);
        if (!RegisterType(src->shape().element_type())) return false;
        if (!IsLeaf(*src) && Elements(src->shape()) > kMaxComputedSource) return false;
        continue;  // gathers its source; the source is not part of the op list
      }
      case Opcode::kExp: case Opcode::kTanh: case Opcode::kLogistic: case Opcode::kLog:
      case Opcode::kSqrt: case Opcode::kRsqrt: case Opcode::kAbs: case Opcode::kNegate:
      case Opcode::kFloor: case Opcode::kCeil: case Opcode::kRoundNearestEven:
      case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
      case Opcode::kMaximum: case Opcode::kMinimum:
        break;
      default:
        return false;  // transposes (tiled walk), compares, selects, iota, pad, ...
    }
    for (const Instruction* op : i->operands()) stack.push_back(op);
  }
  return true;
}

// The walk over one pass's contexts.
class PassCounter {
 public:
  PassCounter(bool vector_path, double hoist_evals, double block)
      : vector_path_(vector_path), hoist_evals_(hoist_evals), block_(block) {}

  // Charges `i` evaluated on context `ctx` of `size` elements, and what it needs.
  void Visit(const Instruction* i, int64_t ctx, double size) {
    if (!seen_[i].insert(ctx).second) return;
    ++visits_;
    flops_ += InstructionFlops(*i) / Elements(i->shape()) * size;
    if (IsLeaf(*i)) return;
    const Opcode op = i->opcode();
    if (op == Opcode::kReduce) {  // a pass's root: its input once over all its elements
      VisitOperand(i->operand(0), ctx, Elements(i->operand(0)->shape()));
      for (int64_t k = 1; k < i->operand_count(); ++k) Visit(i->operand(k), kScalarCtx, 1);
      return;
    }
    const double own = Elements(i->shape());
    if (IsIndexMap(op)) {
      for (int64_t k = 1; k < i->operand_count(); ++k) Visit(i->operand(k), kScalarCtx, 1);
      const Instruction* src = i->operand(0);
      if (IsLeaf(*src)) return;
      if (IsScalar(*src)) return Visit(src, kScalarCtx, 1);
      if (vector_path_) {
        return Visit(src, NewCtx(ctx), Elements(src->shape()));  // computed whole, once
      }
      if (Hoisted(*i)) {
        auto [it, fresh] = hoist_ctx_.try_emplace(src, 0);
        if (fresh) it->second = NewCtx(ctx);
        return Visit(src, it->second, Elements(src->shape()) * hoist_evals_);
      }
      return Visit(src, NewCtx(ctx), size);  // one operand element per demanded element
    }
    if (op == Opcode::kPad || op == Opcode::kConcatenate) {
      // Each array operand is asked only for the positions it supplies.
      for (int64_t k = 0; k < i->operand_count(); ++k) {
        const Instruction* src = i->operand(k);
        if (op == Opcode::kPad && k == 1) {
          Visit(src, kScalarCtx, 1);
        } else {
          VisitOperand(src, NewCtx(ctx), size * std::min(1.0, Elements(src->shape()) / own));
        }
      }
      return;
    }
    const bool moves = op == Opcode::kBitcast && !(i->shape().HasDefaultLayout() &&
                                                   i->operand(0)->shape().HasDefaultLayout());
    for (const Instruction* src : i->operands()) {
      if (IsScalar(*src) && !IsScalar(*i)) {
        Visit(src, kScalarCtx, 1);
      } else {
        VisitOperand(src, moves ? NewCtx(ctx) : ctx, size);  // same set: the memo shares it
      }
    }
  }

  double flops() const { return flops_; }

 private:
  static constexpr int64_t kScalarCtx = -1;

  // Visit, except parameters and constants (read, not computed).
  void VisitOperand(const Instruction* src, int64_t ctx, double size) {
    if (IsLeaf(*src)) return;
    Visit(src, ctx, size);
  }

  int64_t NewCtx(int64_t parent) { return visits_ > kMaxVisits ? parent : next_ctx_++; }

  // The block loop's HoistedOperand: a small computed operand replicated 16x or more, unless
  // the map keeps a contiguous minor run of a block or more (then blocks read it in place).
  bool Hoisted(const Instruction& i) const {
    const double src = Elements(i.operand(0)->shape()), own = Elements(i.shape());
    if (src > kMaxHoisted || src * 16 > own) return false;
    if (i.opcode() != Opcode::kBroadcast) return true;
    const Shape& s = i.shape();
    const auto& dims = i.dimensions();
    double run = 1;
    int64_t out_d = s.rank() - 1;
    for (size_t k = dims.size(); k-- > 0 && out_d >= 0 && dims[k] == out_d; --out_d) {
      run *= static_cast<double>(s.dim(out_d));
    }
    return run < block_;
  }

  bool vector_path_;
  double hoist_evals_, block_;
  int64_t next_ctx_ = 1, visits_ = 0;
  double flops_ = 0;
  std::unordered_map<const Instruction*, std::unordered_set<int64_t>> seen_;
  std::unordered_map<const Instruction*, int64_t> hoist_ctx_;
};

// ElementwiseBlock (fused/run.cc): 4096, halved down to 1024 while a block's intermediates
// (4 bytes per f32-kind value, 8 per f64/integer value, 8 more per index list) exceed 40 KiB.
double BlockSize(const std::vector<const Instruction*>& live) {
  double per_elem = 0;
  for (const Instruction* i : live) {
    const Opcode op = i->opcode();
    if (IsLeaf(*i) || op == Opcode::kReshape || op == Opcode::kTuple) continue;
    per_elem += RegisterType(i->shape().element_type()) ? 4 : 8;
    if (IsIndexMap(op) || op == Opcode::kPad || op == Opcode::kConcatenate) per_elem += 8;
  }
  double block = kBlock;
  while (block > kMinBlock && block * per_elem > kL1Budget) block /= 2;
  return block;
}

}  // namespace

bool FusedLoopSupported(const Computation& fused) {
  const Instruction* root = fused.root();
  if (root == nullptr) return false;
  for (const Instruction* i : LiveOrder(fused)) {
    if (i == root && i->opcode() == Opcode::kTuple) continue;
    const Shape& s = i->shape();
    if (!s.IsArray() || s.rank() > 16 || !BlockType(s.element_type())) return false;
    switch (i->opcode()) {
      case Opcode::kParameter: case Opcode::kConstant: case Opcode::kIota:
      case Opcode::kBroadcast: case Opcode::kReshape: case Opcode::kBitcast:
      case Opcode::kTranspose: case Opcode::kSlice: case Opcode::kReverse: case Opcode::kPad:
      case Opcode::kConcatenate: case Opcode::kConvert: case Opcode::kSelect:
      case Opcode::kClamp: case Opcode::kBitcastConvert:
        break;
      case Opcode::kDynamicSlice:
        if (i->operand_count() != 1 + s.rank()) return false;
        break;
      case Opcode::kCompare:
        if (i->attrs().comparison_type == "TOTALORDER" &&
            FloatKind(i->operand(0)->shape().element_type())) {
          return false;
        }
        break;
      case Opcode::kReduce: {
        const bool output = i == root || (root->opcode() == Opcode::kTuple && i->user_count() == 1 &&
                                          i->users()[0] == root);
        if (!output || i->operand_count() != 2 || !SimpleReducer(i->to_apply())) return false;
        break;
      }
      default:
        if (!IsElementwise(i->opcode())) return false;
        break;
    }
  }
  return true;
}

FusedPath FusedPathOf(const Computation& fused) {
  if (!FusedLoopSupported(fused)) return FusedPath::kUnfused;
  const std::vector<const Instruction*> outputs = Outputs(fused);
  if (RegisterPath(outputs)) return FusedPath::kRegister;
  for (const Instruction* o : outputs) {
    if (o->opcode() == Opcode::kReduce) return FusedPath::kReduce;
  }
  return FusedPath::kBlock;
}

int FusedNodeCount(const Computation& fused) {
  int n = 0;
  for (const auto& i : fused.instructions()) {
    const Opcode op = i->opcode();
    n += op != Opcode::kParameter && op != Opcode::kConstant && op != Opcode::kTuple;
  }
  return n;
}

double FusedLoopFlops(const Computation& fused, int threads) {
  if (fused.root() == nullptr) return 0;
  if (!FusedLoopSupported(fused)) {  // runs unfused: every instruction once
    double f = 0;
    for (const auto& i : fused.instructions()) f += InstructionFlops(*i);
    return f;
  }
  const std::vector<const Instruction*> live = LiveOrder(fused);
  const std::vector<const Instruction*> outputs = Outputs(fused);
  const double block = BlockSize(live);
  auto hoist_evals = [&](double total) {
    // One evaluator per chunk of blocks: min(blocks, 4 x threads) chunks (ThreadPool).
    const double blocks = std::ceil(total / block);
    return threads <= 1 || blocks < 2 ? 1.0 : std::min(blocks, 4.0 * threads);
  };
  if (RegisterPath(outputs)) {
    PassCounter pass(true, 1, block);
    for (const Instruction* o : outputs) pass.Visit(o, 0, Elements(o->shape()));
    return pass.flops();
  }
  // Elementwise outputs with the first one's dims share a pass; the others run one each.
  double flops = 0;
  std::vector<const Instruction*> group, others;
  for (const Instruction* o : outputs) {
    const bool joins = o->opcode() != Opcode::kReduce &&
                       (group.empty() || group[0]->shape().dims() == o->shape().dims());
    (joins ? group : others).push_back(o);
  }
  if (!group.empty()) {
    const double total = Elements(group[0]->shape());
    PassCounter pass(false, hoist_evals(total), block);
    for (const Instruction* o : group) pass.Visit(o, 0, total);
    flops += pass.flops();
  }
  for (const Instruction* o : others) {
    PassCounter pass(false, hoist_evals(Elements(o->shape())), block);
    pass.Visit(o, 0, Elements(o->shape()));
    flops += pass.flops();
  }
  return flops;
}

}  // namespace hlox
