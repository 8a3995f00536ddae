// Shapes the text leaves out. XLA lets an instruction omit its shape when the opcode's shape
// follows from its operands and attributes; hlox infers it with ir/shape_inference.h for the
// opcodes where that inference reads nothing from the declared shape, and asks for the shape
// elsewhere (XLA too requires it for parameter, constant, convert, reshape, custom-call, ...).
// Inference runs once every call is resolved, callees first, each computation in operand
// order; then the checks that needed every shape run.
#include <algorithm>
#include <iterator>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ir/parser_internal.h"
#include "ir/shape_inference.h"

namespace hlox::parser_internal {
namespace {

// Elementwise ops whose result type the text chooses (hlox's inference reads it from the
// written shape), and everything else whose shape the text supplies.
constexpr Opcode kNeedsShape[] = {Opcode::kConvert,
                                  Opcode::kBitcastConvert,
                                  Opcode::kReal,
                                  Opcode::kImag,
                                  Opcode::kComplex,
                                  Opcode::kAbs,
                                  Opcode::kStochasticConvert,
                                  Opcode::kBroadcast,
                                  Opcode::kReshape,
                                  Opcode::kBitcast,
                                  Opcode::kDot,
                                  Opcode::kConvolution,
                                  Opcode::kIota,
                                  Opcode::kParameter,
                                  Opcode::kConstant,
                                  Opcode::kRng,
                                  Opcode::kRngBitGenerator,
                                  Opcode::kRngGetAndUpdateState,
                                  Opcode::kCustomCall,
                                  Opcode::kFusion,
                                  Opcode::kAllGather,
                                  Opcode::kReduceScatter,
                                  Opcode::kAsyncStart,
                                  Opcode::kAsyncUpdate,
                                  Opcode::kAsyncDone};

// Non-elementwise ops whose shape follows from operands, attributes and called computations.
constexpr Opcode kInferable[] = {Opcode::kTuple,
                                 Opcode::kGetTupleElement,
                                 Opcode::kTranspose,
                                 Opcode::kReverse,
                                 Opcode::kCopy,
                                 Opcode::kSlice,
                                 Opcode::kConcatenate,
                                 Opcode::kPad,
                                 Opcode::kReduce,
                                 Opcode::kReduceWindow,
                                 Opcode::kSort,
                                 Opcode::kWhile,
                                 Opcode::kCall,
                                 Opcode::kConditional,
                                 Opcode::kMap,
                                 Opcode::kAfterAll,
                                 Opcode::kPartitionId,
                                 Opcode::kReplicaId,
                                 Opcode::kGetDimensionSize,
                                 Opcode::kAddDependency,
                                 Opcode::kOptimizationBarrier,
                                 Opcode::kSelectAndScatter,
                                 Opcode::kCholesky,
                                 Opcode::kTriangularSolve,
                                 Opcode::kDynamicSlice,
                                 Opcode::kDynamicUpdateSlice,
                                 Opcode::kGather,
                                 Opcode::kScatter,
                                 Opcode::kBatchNormTraining,
                                 Opcode::kBatchNormInference,
                                 Opcode::kBatchNormGrad,
                                 Opcode::kScan,
                                 Opcode::kShuffle,
                                 Opcode::kCollectiveReduce};

// True when hlox can infer `op`'s shape without a written one.
bool InferableWithoutShape(Opcode op) {
  auto in = [op](const auto& list) { return std::find(std::begin(list), std::end(list), op) != std::end(list); };
  if (in(kNeedsShape)) return false;
  return IsElementwise(op) || in(kInferable);
}

}  // namespace

absl::Status Parser::InferMissingShapes(const Module& module) {
  if (shapes_to_infer_.empty()) return absl::OkStatus();
  std::unordered_map<const Instruction*, size_t> pos_of;
  for (const auto& [instr, pos] : shapes_to_infer_) {
    if (!InferableWithoutShape(instr->opcode())) {
      return lex_.ErrorAt(pos, absl::StrCat("cannot infer the shape of ", std::string(OpcodeName(instr->opcode())),
                                            ": write it before the opcode"));
    }
    pos_of[instr] = pos;
  }
  for (Computation* c : module.PostOrderComputations()) {
    for (Instruction* i : c->PostOrder()) {
      auto it = pos_of.find(i);
      if (it == pos_of.end()) continue;
      absl::StatusOr<Shape> s = InferInstructionShape(*i);
      if (!s.ok()) {
        return lex_.ErrorAt(it->second, absl::StrCat("cannot infer the shape of ", std::string(OpcodeName(i->opcode())),
                                                     ": ", std::string(s.status().message())));
      }
      i->set_shape(*std::move(s));
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::CheckWrittenShape(const PendingInstr* operand, Shape written, size_t pos) {
  if (operand->infer_shape) {
    written_shapes_.push_back({operand->raw, std::move(written), pos});
    return absl::OkStatus();
  }
  if (written.Compatible(operand->raw->shape())) return absl::OkStatus();
  return lex_.ErrorAt(pos,
                      absl::StrCat("operand '", operand->raw->name(), "' is written with shape ", written.ToString(),
                                   " but is defined with shape ", operand->raw->shape().ToString()));
}

absl::Status Parser::CheckWrittenShapes() {
  for (const WrittenShape& w : written_shapes_) {
    if (!w.shape.Compatible(w.operand->shape())) {
      return lex_.ErrorAt(w.pos,
                          absl::StrCat("operand '", w.operand->name(), "' is written with shape ", w.shape.ToString(),
                                       " but is defined with shape ", w.operand->shape().ToString()));
    }
  }
  // A custom call's operand_layout_constraints: one shape per operand, each compatible with it.
  for (const LayoutCheck& l : layout_checks_) {
    const Instruction& instr = *l.instr;
    if (static_cast<int64_t>(l.shapes.size()) != instr.operand_count()) {
      return lex_.ErrorAt(l.pos, absl::StrCat("expected ", instr.operand_count(), " operand layout constraints, got ",
                                              l.shapes.size()));
    }
    for (size_t i = 0; i < l.shapes.size(); ++i) {
      if (!l.shapes[i].Compatible(instr.operand(i)->shape())) {
        return lex_.ErrorAt(l.pos,
                            absl::StrCat("operand layout constraint ", l.shapes[i].ToString(), " for operand ", i,
                                         " is not compatible with its shape ", instr.operand(i)->shape().ToString()));
      }
    }
  }
  for (const auto& [instr, aliases] : operand_alias_checks_) HLOX_RETURN_IF_ERROR(CheckOperandAliases(*instr, aliases));
  for (const auto& [instr, pos] : origin_checks_) {
    HLOX_RETURN_IF_ERROR(CheckOriginalValue(*instr->attrs().original_value, instr->shape(), pos));
  }
  return absl::OkStatus();
}

// output_to_operand_aliasing as XLA's verifier checks it: the output index exists in the
// result, the operand exists and so does the index in it, the two buffers have compatible
// shapes, and no output is listed twice (stricter than XLA).
absl::Status Parser::CheckOperandAliases(const Instruction& instr, const std::vector<OperandAlias>& aliases) {
  std::vector<const std::vector<int64_t>*> outputs;
  for (const OperandAlias& a : aliases) {
    const Shape* out = SubshapeAt(instr.shape(), a.output_index);
    if (out == nullptr) return lex_.ErrorAt(a.pos, "output_to_operand_aliasing names an output index the result lacks");
    if (a.operand < 0 || a.operand >= instr.operand_count()) {
      return lex_.ErrorAt(
          a.pos, absl::StrCat("output_to_operand_aliasing names operand ", a.operand, " of ", instr.operand_count()));
    }
    const Shape* in = SubshapeAt(instr.operand(a.operand)->shape(), a.operand_index);
    if (in == nullptr)
      return lex_.ErrorAt(a.pos, absl::StrCat("operand ", a.operand, " lacks the aliased shape index"));
    if (!in->Compatible(*out)) {
      return lex_.ErrorAt(
          a.pos, absl::StrCat("aliased output ", out->ToString(), " and operand buffer ", in->ToString(), " differ"));
    }
    for (const std::vector<int64_t>* o : outputs) {
      if (*o == a.output_index) return lex_.ErrorAt(a.pos, "output_to_operand_aliasing lists an output twice");
    }
    outputs.push_back(&a.output_index);
  }
  return absl::OkStatus();
}

}  // namespace hlox::parser_internal
