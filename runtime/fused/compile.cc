// Compiles a fused computation into a FusedProgram: one FusedNode per instruction reachable
// from the root, with index maps precomputed (affine coefficients for broadcast, transpose,
// slice, reverse and dynamic-slice; layouts for physical bitcasts). Anything the block
// evaluator does not implement is an Unimplemented status naming the instruction.
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "runtime/core/executor.h"
#include "runtime/core/kernel_util.h"
#include "runtime/fused/program_impl.h"
#include "runtime/fused/stream.h"
#include "runtime/kernels/scalar_access.h"
#include "runtime/math/block_ops.h"

namespace hlox::rt {
namespace {

absl::Status Unsupported(const Instruction& instr, std::string_view why) {
  return absl::UnimplementedError(absl::StrCat("fused loop: ", instr.name(), " (",
                                               std::string(OpcodeName(instr.opcode())), "): ",
                                               std::string(why)));
}

bool KindOf(PrimitiveType t, VKind* k) {
  switch (t) {
    case PrimitiveType::kF32: case PrimitiveType::kBF16: case PrimitiveType::kF16:
      *k = VKind::kF32; return true;
    case PrimitiveType::kF64:
      *k = VKind::kF64; return true;
    case PrimitiveType::kPred: case PrimitiveType::kS8: case PrimitiveType::kS16:
    case PrimitiveType::kS32: case PrimitiveType::kS64: case PrimitiveType::kU8:
    case PrimitiveType::kU16: case PrimitiveType::kU32:
      *k = VKind::kI64; return true;
    default:
      return false;
  }
}

// Row-major physical strides of a shape's dims under its layout (minor_to_major).
std::vector<int64_t> PhysicalStrides(const Shape& s) {
  std::vector<int64_t> mtm = s.MinorToMajor();
  std::vector<int64_t> strides(s.rank(), 1);
  int64_t acc = 1;
  for (int64_t d : mtm) {
    strides[d] = acc;
    acc *= s.dim(d);
  }
  return strides;
}

bool ElementwiseSupported(const FusedNode& nd, const std::vector<FusedNode>& nodes) {
  Opcode op = nd.opcode;
  VKind in = nodes[nd.operands[0]].kind;
  if (op == Opcode::kIsFinite) return true;
  if (nd.op == NodeOp::kUnary) {
    if (in != nd.kind) return false;
    if (nd.kind == VKind::kF32) return fused::UnaryFloat<float>(op, nullptr, nullptr, 0);
    if (nd.kind == VKind::kF64) return fused::UnaryFloat<double>(op, nullptr, nullptr, 0);
    return fused::UnaryInt(op, nd.type, nullptr, nullptr, 0);
  }
  for (int o : nd.operands) {
    if (nodes[o].kind != nd.kind) return false;
  }
  if (nd.kind == VKind::kF32) return fused::BinaryFloat<float>(op, nullptr, nullptr, nullptr, 0);
  if (nd.kind == VKind::kF64) return fused::BinaryFloat<double>(op, nullptr, nullptr, nullptr, 0);
  return fused::BinaryInt(op, nd.type, nullptr, nullptr, nullptr, 0);
}

// Fills node fields for a non-root instruction; returns Unimplemented when unsupported.
absl::Status CompileNode(const Instruction& instr, FusedNode& nd, std::vector<FusedNode>& nodes,
                         uint64_t seed) {
  const Shape& shape = instr.shape();
  auto op_shape = [&](int i) -> const Shape& { return instr.operand(i)->shape(); };
  if (instr.operand_count() > 0) {
    nd.op_dims = op_shape(0).dims();
    nd.op_strides = RowMajorStrides(nd.op_dims);
  }
  Opcode opc = instr.opcode();
  switch (opc) {
    case Opcode::kParameter:
      nd.op = NodeOp::kParam;
      nd.param = instr.parameter_number();
      return absl::OkStatus();
    case Opcode::kConstant: {
      nd.op = NodeOp::kConstant;
      Literal lit = instr.literal().elided()
                        ? LiteralFromValue(ConstantValue(instr, seed), shape)
                        : instr.literal();
      int64_t n = shape.ElementCount();
      for (int64_t i = 0; i < n; ++i) {
        if (nd.kind == VKind::kF32) nd.cf.push_back(static_cast<float>(lit.GetAsDouble(i)));
        else if (nd.kind == VKind::kF64) nd.cd.push_back(lit.GetAsDouble(i));
        else nd.ci.push_back(lit.GetAsInt64(i));
      }
      return absl::OkStatus();
    }
    case Opcode::kIota:
      nd.op = NodeOp::kIota;
      nd.iota_dim = instr.attrs().iota_dimension;
      if (nd.iota_dim < 0 || nd.iota_dim >= shape.rank()) return Unsupported(instr, "bad iota dim");
      return absl::OkStatus();
    case Opcode::kBroadcast: {
      nd.op = NodeOp::kAffine;
      nd.coef.assign(shape.rank(), 0);
      const auto& dims = instr.dimensions();
      if (dims.size() != nd.op_dims.size()) return Unsupported(instr, "bad dimensions");
      for (size_t k = 0; k < dims.size(); ++k) {
        if (dims[k] < 0 || dims[k] >= shape.rank()) return Unsupported(instr, "bad dimensions");
        nd.coef[dims[k]] = nd.op_strides[k];
      }
      return absl::OkStatus();
    }
    case Opcode::kReshape:
      nd.op = NodeOp::kIdentity;
      return absl::OkStatus();
    case Opcode::kBitcast:
      if (shape.HasDefaultLayout() && op_shape(0).HasDefaultLayout()) {
        nd.op = NodeOp::kIdentity;
      } else {
        nd.op = NodeOp::kLayoutBitcast;
        nd.out_phys_strides = PhysicalStrides(shape);
        nd.op_minor_to_major = op_shape(0).MinorToMajor();
      }
      return absl::OkStatus();
    case Opcode::kTranspose: {
      nd.op = NodeOp::kAffine;
      const auto& perm = instr.dimensions();
      if (static_cast<int64_t>(perm.size()) != shape.rank()) return Unsupported(instr, "bad permutation");
      for (int64_t p : perm) nd.coef.push_back(nd.op_strides.at(p));
      return absl::OkStatus();
    }
    case Opcode::kSlice: {
      nd.op = NodeOp::kAffine;
      const auto& sl = instr.attrs().slice;
      if (static_cast<int64_t>(sl.size()) != shape.rank()) return Unsupported(instr, "bad slice");
      for (size_t d = 0; d < sl.size(); ++d) {
        nd.coef.push_back(nd.op_strides[d] * sl[d].stride);
        nd.offset += sl[d].start * nd.op_strides[d];
      }
      return absl::OkStatus();
    }
    case Opcode::kReverse: {
      nd.op = NodeOp::kAffine;
      nd.coef = nd.op_strides;
      for (int64_t d : instr.dimensions()) {
        nd.coef[d] = -nd.op_strides[d];
        nd.offset += (nd.op_dims[d] - 1) * nd.op_strides[d];
      }
      return absl::OkStatus();
    }
    case Opcode::kDynamicSlice:
      nd.op = NodeOp::kDynamicSlice;
      nd.coef = nd.op_strides;
      if (instr.operand_count() != 1 + shape.rank()) return Unsupported(instr, "array start indices");
      return absl::OkStatus();
    case Opcode::kPad:
      nd.op = NodeOp::kPad;
      nd.padding = instr.attrs().padding;
      if (static_cast<int64_t>(nd.padding.size()) != shape.rank()) return Unsupported(instr, "bad padding");
      return absl::OkStatus();
    case Opcode::kConcatenate: {
      nd.op = NodeOp::kConcat;
      nd.concat_dim = instr.dimensions().empty() ? -1 : instr.dimensions()[0];
      if (nd.concat_dim < 0 || nd.concat_dim >= shape.rank()) return Unsupported(instr, "bad dimension");
      int64_t start = 0;
      for (const Instruction* op : instr.operands()) {
        nd.concat_starts.push_back(start);
        start += op->shape().dim(nd.concat_dim);
      }
      return absl::OkStatus();
    }
    case Opcode::kConvert:
      nd.op = NodeOp::kConvert;
      return absl::OkStatus();
    case Opcode::kBitcastConvert: {
      nd.op = NodeOp::kBitcastConvert;
      PrimitiveType from = op_shape(0).element_type(), to = shape.element_type();
      bool ok = (from == PrimitiveType::kF32 && (to == PrimitiveType::kS32 || to == PrimitiveType::kU32)) ||
                (to == PrimitiveType::kF32 && (from == PrimitiveType::kS32 || from == PrimitiveType::kU32)) ||
                (from == PrimitiveType::kF64 && to == PrimitiveType::kS64) ||
                (to == PrimitiveType::kF64 && from == PrimitiveType::kS64);
      return ok ? absl::OkStatus() : Unsupported(instr, "bitcast-convert types");
    }
    case Opcode::kCompare:
      nd.op = NodeOp::kCompare;
      nd.dir = instr.attrs().comparison.value_or(ComparisonDirection::kEq);
      if (!instr.attrs().comparison) return Unsupported(instr, "no direction");
      if (instr.attrs().comparison_type == "TOTALORDER" && nodes[nd.operands[0]].kind != VKind::kI64) {
        return Unsupported(instr, "total order compare");
      }
      return absl::OkStatus();
    case Opcode::kSelect:
      nd.op = NodeOp::kSelect;
      return absl::OkStatus();
    case Opcode::kClamp:
      nd.op = NodeOp::kClamp;
      return absl::OkStatus();
    default:
      break;
  }
  if (IsElementwiseUnary(opc) || IsElementwiseBinary(opc)) {
    nd.op = IsElementwiseUnary(opc) ? NodeOp::kUnary : NodeOp::kBinary;
    if (!ElementwiseSupported(nd, nodes)) return Unsupported(instr, "op/type not in the block evaluator");
    return absl::OkStatus();
  }
  return Unsupported(instr, "not supported in fused loops");
}

// Fills nd.map_*: nd.dims/coef with size-1 dims dropped and each dim merged into the one
// before it when the operand index runs on across them (coef[d] == coef[d+1] * dims[d+1]).
// Row-major linear indices are unchanged, so sets of the node's indices apply as they are.
void CollapseMap(FusedNode& nd) {
  nd.map_dims.clear();
  nd.map_coef.clear();
  for (size_t d = 0; d < nd.dims.size(); ++d) {
    if (nd.dims[d] == 1) continue;
    if (!nd.map_dims.empty() && nd.map_coef.back() == nd.coef[d] * nd.dims[d]) {
      nd.map_dims.back() *= nd.dims[d];
      nd.map_coef.back() = nd.coef[d];
      continue;
    }
    nd.map_dims.push_back(nd.dims[d]);
    nd.map_coef.push_back(nd.coef[d]);
  }
  if (nd.map_dims.empty()) {
    nd.map_dims.push_back(1);
    nd.map_coef.push_back(0);
  }
  nd.map_strides = RowMajorStrides(nd.map_dims);
}

absl::Status CompileReduce(const Instruction& instr, FusedNode& nd, const std::vector<FusedNode>& nodes) {
  if (instr.operand_count() != 2 || !instr.shape().IsArray()) return Unsupported(instr, "variadic reduce");
  ScalarOp op = ClassifyBinary(instr.to_apply());
  if (op != ScalarOp::kAdd && op != ScalarOp::kMul && op != ScalarOp::kMax && op != ScalarOp::kMin &&
      op != ScalarOp::kAnd && op != ScalarOp::kOr) {
    return Unsupported(instr, "reducer computation");
  }
  if ((op == ScalarOp::kAnd || op == ScalarOp::kOr) && nd.kind != VKind::kI64) {
    return Unsupported(instr, "logical reducer on floats");
  }
  if (nodes[nd.operands[0]].kind != nd.kind || nodes[nd.operands[1]].kind != nd.kind) {
    return Unsupported(instr, "reduce types");
  }
  nd.op = NodeOp::kReduce;
  nd.reduce_op = static_cast<int>(op);
  // The operand's dims collapsed: size-1 dims dropped, neighbours both reduced or both kept
  // merged (same output order and reduction order, fewer and longer runs for the reducer).
  const std::vector<int64_t>& dims = instr.operand(0)->shape().dims();
  std::vector<bool> reduced(dims.size(), false);
  for (int64_t d : instr.dimensions()) {
    if (d < 0 || d >= static_cast<int64_t>(dims.size()) || reduced[d]) return Unsupported(instr, "bad dimensions");
    reduced[d] = true;
  }
  nd.op_dims.clear();
  nd.reduce_dims.clear();
  bool last_reduced = false;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!nd.op_dims.empty() && reduced[d] == last_reduced) {
      nd.op_dims.back() *= dims[d];
      continue;
    }
    if (reduced[d]) nd.reduce_dims.push_back(static_cast<int64_t>(nd.op_dims.size()));
    nd.op_dims.push_back(dims[d]);
    last_reduced = reduced[d];
  }
  nd.op_strides = RowMajorStrides(nd.op_dims);
  return absl::OkStatus();
}

}  // namespace

FusedProgram::FusedProgram() : impl_(std::make_unique<Impl>()) {}
FusedProgram::~FusedProgram() = default;
int64_t FusedProgram::node_count() const { return static_cast<int64_t>(impl_->nodes.size()); }
bool FusedProgram::has_vector_path() const { return impl_->vec != nullptr; }
bool FusedProgram::has_jit_path() const { return impl_->vec != nullptr && impl_->vec->has_jit(); }
int64_t FusedProgram::jit_code_bytes_for(IsaLevel level) const {
  return impl_->vec != nullptr ? impl_->vec->jit_code_bytes_for(level) : 0;
}
int64_t FusedProgram::tiled_output_count() const {
  int64_t n = 0;
  for (int64_t d : impl_->tile_dim) n += d >= 0;
  return n;
}

absl::StatusOr<std::unique_ptr<FusedProgram>> FusedProgram::Compile(const Computation& comp,
                                                                    uint64_t seed) {
  if (comp.root() == nullptr) return absl::InvalidArgumentError("fused computation has no root");
  std::unique_ptr<FusedProgram> prog(new FusedProgram());
  Impl& im = *prog->impl_;
  im.result_shape = comp.root()->shape();
  im.param_count = comp.parameter_count();
  // Reachable instructions only, in topological order.
  std::unordered_set<const Instruction*> live{comp.root()};
  std::vector<Instruction*> order = comp.PostOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (!live.count(*it)) continue;
    for (const Instruction* op : (*it)->operands()) live.insert(op);
  }
  std::unordered_map<const Instruction*, int> id;
  for (const Instruction* instr : order) {
    if (!live.count(instr)) continue;
    if (instr->opcode() == Opcode::kTuple && instr == comp.root()) {
      im.tuple_root = true;
      for (const Instruction* op : instr->operands()) im.outputs.push_back(id.at(op));
      continue;
    }
    FusedNode nd;
    nd.instr = instr;
    nd.opcode = instr->opcode();
    const Shape& shape = instr->shape();
    if (!shape.IsArray()) return Unsupported(*instr, "non-array value");
    if (shape.rank() > 16) return Unsupported(*instr, "rank above 16");
    nd.type = shape.element_type();
    if (!KindOf(nd.type, &nd.kind)) return Unsupported(*instr, "element type");
    nd.dims = shape.dims();
    nd.strides = RowMajorStrides(nd.dims);
    for (const Instruction* op : instr->operands()) nd.operands.push_back(id.at(op));
    if (instr->opcode() == Opcode::kReduce) {
      bool root_output = instr == comp.root() ||
                         (comp.root()->opcode() == Opcode::kTuple && instr->user_count() == 1 &&
                          instr->users()[0] == comp.root());
      if (!root_output) return Unsupported(*instr, "reduce that is not a fusion output");
      if (absl::Status s = CompileReduce(*instr, nd, im.nodes); !s.ok()) return s;
    } else if (absl::Status s = CompileNode(*instr, nd, im.nodes, seed); !s.ok()) {
      return s;
    }
    if ((nd.op == NodeOp::kAffine || nd.op == NodeOp::kDynamicSlice) && !nd.dims.empty()) {
      CollapseMap(nd);
    }
    id[instr] = static_cast<int>(im.nodes.size());
    im.nodes.push_back(std::move(nd));
  }
  if (!im.tuple_root) im.outputs.push_back(id.at(comp.root()));
  im.streamed = StreamedParams(im.nodes, im.outputs);
  im.vec = VectorProgram::Build(im.nodes, im.outputs);
  im.tile_dim = TileDims(im.nodes, im.outputs);
  for (const FusedNode& nd : im.nodes) {
    im.work_nodes += (nd.op == NodeOp::kUnary || nd.op == NodeOp::kBinary) && nd.kind == VKind::kF32;
    // Arena bytes per element of a block: values of computed nodes, index lists of maps.
    if (nd.op == NodeOp::kParam || nd.op == NodeOp::kConstant || nd.op == NodeOp::kIdentity) continue;
    im.block_bytes_per_elem += KindBytes(nd.kind);
    if (nd.op == NodeOp::kAffine || nd.op == NodeOp::kDynamicSlice ||
        nd.op == NodeOp::kLayoutBitcast || nd.op == NodeOp::kPad || nd.op == NodeOp::kConcat) {
      im.block_bytes_per_elem += 8;
    }
  }
  return prog;
}

void ParseFusedRunOptions(const std::string& config, FusedRunOptions* options) {
  int64_t block = 0, threads = -1;
  if (ReadConfigInt(config, "hlox_block", &block) && block >= 16) {
    options->block = block;
    options->auto_block = false;
  }
  if (ReadConfigInt(config, "hlox_threads", &threads) && (threads == 0 || threads == 1)) {
    options->threads = static_cast<int>(threads);
  }
  int64_t tile = 0;
  if (ReadConfigInt(config, "hlox_tile", &tile)) {
    if (tile == 0) options->tiled = false;
    if (tile >= 8 && tile <= 256) options->tile = tile;
  }
}

}  // namespace hlox::rt
