// Shape inference for data movement, tuples, control flow and the remaining operations.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "ir/computation.h"
#include "ir/shape_inference.h"

namespace hlox {
namespace {

absl::Status Bad(const std::string& why) { return absl::InvalidArgumentError(why); }

std::string Dims(const std::vector<int64_t>& d) { return absl::StrCat("[", absl::StrJoin(d, ","), "]"); }

absl::StatusOr<Shape> InferBroadcast(const Instruction& instr) {
  const Shape& in = instr.operand(0)->shape();
  const Shape& out = instr.shape();
  const auto& dims = instr.dimensions();
  if (static_cast<int64_t>(dims.size()) != in.rank()) {
    return Bad(absl::StrCat("broadcast dimensions ", Dims(dims), " do not match operand rank ", in.rank()));
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= out.rank() || out.dim(dims[i]) != in.dim(i)) {
      return Bad(absl::StrCat("broadcast maps operand dim ", i, " to invalid result dim ", dims[i]));
    }
  }
  return Shape(in.element_type(), out.dims());
}

absl::StatusOr<Shape> InferTranspose(const Instruction& instr) {
  const Shape& in = instr.operand(0)->shape();
  const auto& perm = instr.dimensions();
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < static_cast<int64_t>(sorted.size()); ++i) {
    if (sorted[i] != i) return Bad("transpose dimensions are not a permutation");
  }
  if (static_cast<int64_t>(perm.size()) != in.rank()) return Bad("transpose permutation rank differs");
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(in.dim(p));
  return Shape(in.element_type(), dims);
}

absl::StatusOr<Shape> InferDynamicSlice(const Instruction& instr) {
  const Shape& in = instr.operand(0)->shape();
  const auto& sizes = instr.attrs().dynamic_slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != in.rank()) return Bad("dynamic_slice_sizes rank differs");
  bool vector_form = instr.operand_count() == 2 && in.rank() != 1;
  if (!vector_form && instr.operand_count() != in.rank() + 1) return Bad("dynamic-slice needs one index per dimension");
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (sizes[d] < 0 || sizes[d] > in.dim(d)) return Bad("dynamic slice size exceeds operand");
  }
  return Shape(in.element_type(), sizes);
}

absl::StatusOr<Shape> InferDynamicUpdateSlice(const Instruction& instr) {
  const Shape& in = instr.operand(0)->shape();
  const Shape& upd = instr.operand(1)->shape();
  if (upd.rank() != in.rank()) return Bad("dynamic-update-slice update rank differs");
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (upd.dim(d) > in.dim(d)) return Bad("dynamic-update-slice update larger than operand");
  }
  return Shape(in.element_type(), in.dims());
}

absl::StatusOr<Shape> InferGetTupleElement(const Instruction& instr) {
  const Shape& in = instr.operand(0)->shape();
  if (!in.IsTuple()) return Bad("get-tuple-element of a non-tuple");
  int64_t i = instr.tuple_index();
  if (i < 0 || i >= in.tuple_size()) {
    return Bad(absl::StrCat("tuple index ", i, " out of range for ", in.tuple_size(), " elements"));
  }
  return in.tuple_shape(i);
}

absl::Status CheckParams(const Computation* c, const std::vector<const Shape*>& args, const char* what) {
  if (c->parameter_count() != static_cast<int64_t>(args.size())) {
    return Bad(absl::StrCat(what, " computation ", c->name(), " takes ", c->parameter_count(),
                            " parameters, given ", args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (!c->parameter(i) || !c->parameter(i)->shape().Compatible(*args[i])) {
      return Bad(absl::StrCat(what, " computation ", c->name(), " parameter ", i, " shape mismatch: ",
                              c->parameter(i) ? c->parameter(i)->shape().ToString(false) : "missing",
                              " vs ", args[i]->ToString(false)));
    }
  }
  return absl::OkStatus();
}

std::vector<const Shape*> OperandShapes(const Instruction& instr) {
  std::vector<const Shape*> s;
  for (Instruction* op : instr.operands()) s.push_back(&op->shape());
  return s;
}

absl::StatusOr<Shape> InferWhile(const Instruction& instr) {
  if (instr.called_computations().size() != 2) return Bad("while needs condition and body");
  const Computation* cond = instr.called_computations()[0];
  const Computation* body = instr.called_computations()[1];
  const Shape& init = instr.operand(0)->shape();
  HLOX_RETURN_IF_ERROR(CheckParams(cond, {&init}, "while condition"));
  HLOX_RETURN_IF_ERROR(CheckParams(body, {&init}, "while body"));
  if (!cond->root() || cond->ResultShape().element_type() != PrimitiveType::kPred || cond->ResultShape().rank() != 0) {
    return Bad("while condition must return pred[]");
  }
  if (!body->root() || !body->ResultShape().Compatible(init)) return Bad("while body result differs from its parameter");
  return init;
}

absl::StatusOr<Shape> InferCallLike(const Instruction& instr, const char* what) {
  if (instr.called_computations().size() != 1) return Bad(absl::StrCat(what, " needs one called computation"));
  const Computation* c = instr.called_computations()[0];
  HLOX_RETURN_IF_ERROR(CheckParams(c, OperandShapes(instr), what));
  if (!c->root()) return Bad("called computation has no root");
  return c->ResultShape();
}

absl::StatusOr<Shape> InferConditional(const Instruction& instr) {
  const auto& branches = instr.called_computations();
  if (branches.empty() || instr.operand_count() != static_cast<int64_t>(branches.size()) + 1) {
    return Bad("conditional needs a selector and one operand per branch");
  }
  const Shape& sel = instr.operand(0)->shape();
  if (sel.rank() != 0 || (sel.element_type() != PrimitiveType::kPred && sel.element_type() != PrimitiveType::kS32)) {
    return Bad("conditional selector must be pred[] or s32[]");
  }
  if (sel.element_type() == PrimitiveType::kPred && branches.size() != 2) return Bad("pred conditional needs 2 branches");
  for (size_t i = 0; i < branches.size(); ++i) {
    HLOX_RETURN_IF_ERROR(CheckParams(branches[i], {&instr.operand(i + 1)->shape()}, "conditional branch"));
    if (!branches[i]->root() || !branches[i]->ResultShape().Compatible(branches[0]->ResultShape())) {
      return Bad("conditional branches return different shapes");
    }
  }
  return branches[0]->ResultShape();
}

absl::StatusOr<Shape> InferSort(const Instruction& instr) {
  if (instr.operand_count() == 0 || instr.dimensions().size() != 1) return Bad("sort needs operands and one dimension");
  const Shape& s0 = instr.operand(0)->shape();
  if (instr.dimensions()[0] < 0 || instr.dimensions()[0] >= std::max<int64_t>(s0.rank(), 1)) {
    return Bad("sort dimension out of range");
  }
  std::vector<Shape> out;
  for (Instruction* op : instr.operands()) {
    if (op->shape().dims() != s0.dims()) return Bad("sort operands differ in dims");
    out.push_back(Shape(op->shape().element_type(), op->shape().dims()));
  }
  return out.size() == 1 ? out[0] : Shape::Tuple(out);
}

absl::StatusOr<Shape> InferBatchNorm(const Instruction& instr) {
  const Shape& x = instr.operand(0)->shape();
  int64_t f = instr.attrs().feature_index;
  if (f < 0 || f >= x.rank()) return Bad("batch-norm feature_index out of range");
  Shape vec(x.element_type(), {x.dim(f)});
  for (int64_t i = 1; i < instr.operand_count(); ++i) {
    bool is_grad_output = instr.opcode() == Opcode::kBatchNormGrad && i == 4;
    const Shape& want = is_grad_output ? x : vec;
    if (instr.operand(i)->shape().dims() != want.dims()) return Bad(absl::StrCat("batch-norm operand ", i, " has wrong dims"));
  }
  Shape plain(x.element_type(), x.dims());
  if (instr.opcode() == Opcode::kBatchNormInference) return plain;
  return Shape::Tuple({plain, vec, vec});
}

absl::StatusOr<Shape> InferScatter(const Instruction& instr) {
  int64_t n = (instr.operand_count() - 1) / 2;
  if (n < 1 || instr.operand_count() != 2 * n + 1) return Bad("scatter needs N operands, indices and N updates");
  std::vector<Shape> out;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& s = instr.operand(i)->shape();
    out.push_back(Shape(s.element_type(), s.dims()));
  }
  return n == 1 ? out[0] : Shape::Tuple(out);
}

absl::StatusOr<Shape> InferReshape(const Instruction& instr) {
  const Shape& in = instr.operand(0)->shape();
  if (in.ElementCount() != instr.shape().ElementCount()) {
    return Bad(absl::StrCat("reshape changes the element count: ", in.ElementCount(), " -> ",
                            instr.shape().ElementCount()));
  }
  return Shape(in.element_type(), instr.shape().dims());
}

absl::StatusOr<Shape> InferBitcast(const Instruction& instr) {
  const Shape& in = instr.operand(0)->shape();
  if (in.ByteSize() != instr.shape().ByteSize()) return Bad("bitcast changes the byte size");
  return Shape(instr.shape().element_type(), instr.shape().dims());
}

absl::StatusOr<Shape> InferBitcastConvert(const Instruction& instr) {
  const Shape& in = instr.operand(0)->shape();
  int in_bits = PrimitiveBitWidth(in.element_type());
  int out_bits = PrimitiveBitWidth(instr.shape().element_type());
  std::vector<int64_t> dims = in.dims();
  if (in_bits > out_bits) {
    dims.push_back(in_bits / out_bits);
  } else if (in_bits < out_bits) {
    if (dims.empty() || dims.back() != out_bits / in_bits) return Bad("bitcast-convert to a wider type needs a matching last dim");
    dims.pop_back();
  }
  return Shape(instr.shape().element_type(), dims);
}

absl::StatusOr<Shape> InferTupleOp(const Instruction& instr) {
  std::vector<Shape> elems;
  for (Instruction* op : instr.operands()) elems.push_back(op->shape());
  return Shape::Tuple(elems);
}

absl::StatusOr<Shape> SameAsOperand(const Instruction& instr, int64_t i) {
  const Shape& s = instr.operand(i)->shape();
  if (!s.IsArray()) return s;
  return Shape(s.element_type(), s.dims());
}

// Shapes the text chooses (iota, parameter, rng, ...): the declared array shape, after checking
// what the operands and attributes do constrain.
absl::StatusOr<Shape> Declared(const Instruction& instr) {
  const Shape& d = instr.shape();
  return d.IsArray() ? Shape(d.element_type(), d.dims()) : d;
}

absl::StatusOr<Shape> InferIota(const Instruction& instr) {
  if (!instr.shape().IsArray() || instr.shape().rank() == 0) return Bad("iota needs an array of rank >= 1");
  int64_t d = instr.attrs().iota_dimension;
  if (d < 0 || d >= instr.shape().rank()) return Bad(absl::StrCat("iota_dimension ", d, " out of range"));
  return Declared(instr);
}

absl::StatusOr<Shape> InferMap(const Instruction& instr) {
  if (instr.called_computations().size() != 1 || instr.operand_count() == 0) return Bad("map needs operands and a computation");
  const Shape& s0 = instr.operand(0)->shape();
  for (Instruction* op : instr.operands()) {
    if (op->shape().dims() != s0.dims()) return Bad("map operands differ in dims");
  }
  return Shape(instr.called_computations()[0]->ResultShape().element_type(), s0.dims());
}

// all-reduce keeps its operands' shapes (a tuple for several operands).
absl::StatusOr<Shape> InferAllReduce(const Instruction& instr) {
  std::vector<Shape> out;
  for (Instruction* op : instr.operands()) {
    if (!op->shape().IsArray()) return Bad("all-reduce operand is not an array");
    out.push_back(Shape(op->shape().element_type(), op->shape().dims()));
  }
  if (out.empty()) return Bad("all-reduce without operands");
  return out.size() == 1 ? out[0] : Shape::Tuple(out);
}

// all-gather / reduce-scatter change one dimension by the (unknown) group size: the declared
// shape must agree with the operand everywhere else, and on that dimension be a multiple
// (all-gather) or a divisor (reduce-scatter).
absl::StatusOr<Shape> InferGatherScatterCollective(const Instruction& instr) {
  if (instr.operand_count() != 1 || !instr.shape().IsArray()) return Declared(instr);
  const Shape& in = instr.operand(0)->shape();
  const Shape& out = instr.shape();
  if (in.rank() != out.rank() || instr.dimensions().size() != 1) {
    return Bad("collective needs one dimension and equal ranks");
  }
  int64_t cd = instr.dimensions()[0];
  if (cd < 0 || cd >= in.rank()) return Bad("collective dimension out of range");
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (d == cd) continue;
    if (in.dim(d) != out.dim(d)) return Bad("collective changes a dimension other than its own");
  }
  bool gather = instr.opcode() == Opcode::kAllGather;
  int64_t big = gather ? out.dim(cd) : in.dim(cd), small = gather ? in.dim(cd) : out.dim(cd);
  if (small == 0 ? big != 0 : big % small != 0) return Bad("collective dimension is not a multiple of the group");
  return Shape(in.element_type(), out.dims());
}

// ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes): the
// result is the output buffer. input and output are arrays of one element type that may differ
// only in their leading dimension (the ragged one); the four offset and size operands are
// integer arrays (s32 or s64) of one shape, rank 1 (one update per peer) or 2 (peers x updates).
absl::StatusOr<Shape> InferRaggedAllToAll(const Instruction& instr) {
  const Shape& in = instr.operand(0)->shape();
  const Shape& out = instr.operand(1)->shape();
  if (!in.IsArray() || !out.IsArray()) return Bad("ragged-all-to-all input and output must be arrays");
  if (in.element_type() != out.element_type()) return Bad("ragged-all-to-all input and output element types differ");
  if (in.rank() < 1 || in.rank() != out.rank()) return Bad("ragged-all-to-all input and output need one rank >= 1");
  for (int64_t d = 1; d < in.rank(); ++d) {
    if (in.dim(d) != out.dim(d)) return Bad("ragged-all-to-all input and output differ beyond the leading dimension");
  }
  const Shape& first = instr.operand(2)->shape();
  for (int k = 2; k < 6; ++k) {
    const Shape& o = instr.operand(k)->shape();
    if (!o.IsArray() || (o.element_type() != PrimitiveType::kS32 && o.element_type() != PrimitiveType::kS64)) {
      return Bad("ragged-all-to-all offsets and sizes must be s32 or s64 arrays");
    }
    if (o.rank() < 1 || o.rank() > 2) return Bad("ragged-all-to-all offsets and sizes must have rank 1 or 2");
    if (o.element_type() != first.element_type() || o.dims() != first.dims()) {
      return Bad("ragged-all-to-all offsets and sizes must all have one shape");
    }
  }
  return Shape(out.element_type(), out.dims());
}

absl::StatusOr<Shape> InferRng(const Instruction& instr) {
  for (Instruction* op : instr.operands()) {
    if (op->shape().rank() != 0) return Bad("rng distribution parameters must be scalars");
    if (op->shape().element_type() != instr.shape().element_type()) return Bad("rng parameter type differs from result");
  }
  return Declared(instr);
}

absl::StatusOr<Shape> InferRngBitGenerator(const Instruction& instr) {
  const Shape& d = instr.shape();
  if (!d.IsTuple() || d.tuple_size() != 2) return Bad("rng-bit-generator returns (state, bits)");
  const Shape& state = instr.operand(0)->shape();
  if (!d.tuple_shape(0).Compatible(Shape(state.element_type(), state.dims()))) {
    return Bad("rng-bit-generator's new state differs from its state operand");
  }
  return Shape::Tuple({Shape(state.element_type(), state.dims()),
                       Shape(d.tuple_shape(1).element_type(), d.tuple_shape(1).dims())});
}

}  // namespace

// The dot variants (shape_inference_dot_variants.cc).
absl::StatusOr<Shape> InferRaggedDot(const Instruction& instr);
absl::StatusOr<Shape> InferScaledDot(const Instruction& instr);
// scan, shuffle and the rooted collectives (shape_inference_newer_ops.cc).
absl::StatusOr<Shape> InferScan(const Instruction& instr);
absl::StatusOr<Shape> InferShuffle(const Instruction& instr);
absl::StatusOr<Shape> InferRootedCollective(const Instruction& instr);

// Second half of the dispatch (the first is in shape_inference.cc).
absl::StatusOr<Shape> InferInstructionShapeImpl2(const Instruction& instr) {
  switch (instr.opcode()) {
    case Opcode::kBroadcast: return InferBroadcast(instr);
    case Opcode::kTranspose: return InferTranspose(instr);
    case Opcode::kReshape: return InferReshape(instr);
    case Opcode::kBitcast: return InferBitcast(instr);
    case Opcode::kBitcastConvert: return InferBitcastConvert(instr);
    case Opcode::kDynamicSlice: return InferDynamicSlice(instr);
    case Opcode::kDynamicUpdateSlice: return InferDynamicUpdateSlice(instr);
    case Opcode::kGetTupleElement: return InferGetTupleElement(instr);
    case Opcode::kTuple: return InferTupleOp(instr);
    case Opcode::kWhile: return InferWhile(instr);
    case Opcode::kCall: return InferCallLike(instr, "call");
    case Opcode::kFusion: return InferCallLike(instr, "fusion");
    case Opcode::kConditional: return InferConditional(instr);
    case Opcode::kSort: return InferSort(instr);
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad: return InferBatchNorm(instr);
    case Opcode::kScatter: return InferScatter(instr);
    case Opcode::kCopy:
    case Opcode::kReverse:
    case Opcode::kSelectAndScatter:
    case Opcode::kCholesky:
    case Opcode::kOptimizationBarrier: return SameAsOperand(instr, 0);
    case Opcode::kTriangularSolve: return SameAsOperand(instr, 1);
    case Opcode::kAddDependency: return SameAsOperand(instr, 0);
    case Opcode::kGetDimensionSize: return Shape(PrimitiveType::kS32, {});
    case Opcode::kPartitionId:
    case Opcode::kReplicaId: return Shape(PrimitiveType::kU32, {});
    case Opcode::kAfterAll: return Shape::Token();
    case Opcode::kIota: return InferIota(instr);
    case Opcode::kParameter:
    case Opcode::kRngGetAndUpdateState: return Declared(instr);
    case Opcode::kMap: return InferMap(instr);
    case Opcode::kAllReduce: return InferAllReduce(instr);
    case Opcode::kAllGather:
    case Opcode::kReduceScatter: return InferGatherScatterCollective(instr);
    case Opcode::kRaggedAllToAll: return InferRaggedAllToAll(instr);
    case Opcode::kRaggedDot: return InferRaggedDot(instr);
    case Opcode::kScaledDot: return InferScaledDot(instr);
    case Opcode::kScan: return InferScan(instr);
    case Opcode::kShuffle: return InferShuffle(instr);
    case Opcode::kCollectiveReduce:
    case Opcode::kCollectiveBroadcast: return InferRootedCollective(instr);
    case Opcode::kRng: return InferRng(instr);
    case Opcode::kRngBitGenerator: return InferRngBitGenerator(instr);
    case Opcode::kConstant:
      if (!instr.has_literal()) return Bad("constant without a literal");
      return instr.literal().shape().IsArray()
                 ? Shape(instr.literal().shape().element_type(), instr.literal().shape().dims())
                 : instr.literal().shape();
    default:
      return absl::UnimplementedError(absl::StrCat("no shape inference for ", std::string(OpcodeName(instr.opcode()))));
  }
}

}  // namespace hlox
