// OutputFusion (see kernels/output_fusion.h).
#include "runtime/kernels/output_fusion.h"

#include <algorithm>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "runtime/core/executor_donation.h"

namespace hlox::rt {

OutputFusion::~OutputFusion() = default;

absl::StatusOr<std::unique_ptr<OutputFusion>> OutputFusion::Compile(const Computation& comp, uint64_t seed) {
  const Instruction* root = comp.root();
  if (root == nullptr || !root->shape().IsArray()) {
    return absl::UnimplementedError("output fusion: the root is not one array");
  }
  const Instruction* dot = nullptr;  // the dot or convolution
  for (const auto& i : comp.instructions()) {
    if (i->opcode() != Opcode::kDot && i->opcode() != Opcode::kConvolution) continue;
    if (dot != nullptr) return absl::UnimplementedError("output fusion: more than one dot or convolution");
    dot = i.get();
  }
  if (dot == nullptr) return absl::UnimplementedError("output fusion: no dot or convolution");
  if (dot == root) return absl::UnimplementedError("output fusion: a bare dot or convolution has no epilogue");
  if (dot->operand_count() != 2 || dot->operand(0)->opcode() != Opcode::kParameter ||
      dot->operand(1)->opcode() != Opcode::kParameter) {
    return absl::UnimplementedError("output fusion: the operands are not parameters");
  }
  if (!dot->shape().IsArray() || dot->shape().element_type() != root->shape().element_type() ||
      dot->shape().dims() != root->shape().dims() || !ElementwiseToRoot(dot, root->shape())) {
    return absl::UnimplementedError("output fusion: the result reaches the root through more than elementwise ops");
  }
  auto out = std::unique_ptr<OutputFusion>(new OutputFusion());
  out->dnums_ = dot->attrs().dot.value_or(DotDimensionNumbers{});
  if (dot->opcode() == Opcode::kConvolution) {
    out->conv_comp_ = std::make_unique<Computation>(absl::StrCat(comp.name(), ".conv"));
    Instruction* a = out->conv_comp_->AddInstruction(Instruction::CreateParameter(0, dot->operand(0)->shape()));
    Instruction* b = out->conv_comp_->AddInstruction(Instruction::CreateParameter(1, dot->operand(1)->shape()));
    Instruction* c = out->conv_comp_->AddInstruction(dot->CloneWithOperands(dot->shape(), {a, b}));
    out->conv_comp_->set_root(c);
    out->conv_ = c;
  }
  out->lhs_param_ = dot->operand(0)->parameter_number();
  out->rhs_param_ = dot->operand(1)->parameter_number();
  out->dot_param_ = comp.parameter_count();
  out->result_shape_ = root->shape();
  // The epilogue: the fused computation with the dot replaced by one more parameter.
  out->epilogue_comp_ = std::make_unique<Computation>(absl::StrCat(comp.name(), ".epilogue"));
  Computation& epi = *out->epilogue_comp_;
  std::unordered_map<const Instruction*, Instruction*> map;
  for (const Instruction* i : comp.PostOrder()) {
    if (i == dot) {
      auto p = Instruction::CreateParameter(out->dot_param_, dot->shape());
      p->set_name(absl::StrCat(dot->name(), ".result"));
      map[i] = epi.AddInstruction(std::move(p));
      continue;
    }
    std::vector<Instruction*> ops;
    for (const Instruction* op : i->operands()) ops.push_back(map.at(op));
    map[i] = epi.AddInstruction(i->CloneWithOperands(i->shape(), std::move(ops)));
  }
  epi.set_root(map.at(root));
  epi.RebuildParameterList();
  if (epi.parameter_count() != out->dot_param_ + 1) {
    return absl::UnimplementedError("output fusion: the fused parameters are not numbered 0..n-1");
  }
  auto prog = FusedProgram::Compile(epi, seed);
  if (!prog.ok()) return prog.status();
  if (!(*prog)->has_range_eval()) return absl::UnimplementedError("output fusion: the epilogue is not elementwise");
  out->epilogue_ = std::move(prog).value();
  return out;
}

absl::StatusOr<Value> OutputFusion::Run(const std::vector<const Value*>& operands, ThreadPool* pool,
                                        const GemmTuning& gemm, const ConvTuning& conv) const {
  if (static_cast<int64_t>(operands.size()) != dot_param_) {
    return absl::InvalidArgumentError(absl::StrCat("output fusion: expected ", dot_param_, " operands, got ",
                                                   operands.size()));
  }
  std::vector<const Buffer*> params;
  for (const Value* v : operands) {
    if (v == nullptr || !v->is_array()) return absl::InvalidArgumentError("output fusion: non-array operand");
    params.push_back(v->array.get());
  }
  // A fresh buffer, never a donated operand: the dot or convolution writes it before the
  // epilogue reads the other operands.
  BufferPtr result = std::make_shared<Buffer>(result_shape_);
  params.push_back(result.get());
  const std::unique_ptr<FusedProgram::Rows> rows = epilogue_->BindRows(params, *result);
  const DotEpilogue epilogue = [&](int64_t first, int64_t n, int64_t stride, int64_t len) {
    rows->Run(first, n, stride, len);
  };
  if (conv_ == nullptr) {
    HLOX_RETURN_IF_ERROR(DotGeneral(*params[lhs_param_], *params[rhs_param_], dnums_, *result, pool, 1.0, 0.0,
                                    gemm, &epilogue));
    return Value::Array(std::move(result));
  }
  // A convolution's parts go to the epilogue as they finish when it runs on the register path;
  // the block loop takes the whole result after the convolution, in large chunks.
  HLOX_ASSIGN_OR_RETURN(const bool reported,
                        ConvolutionInto(*conv_, *params[lhs_param_], *params[rhs_param_], result, pool, conv,
                                        rows->registers() ? &epilogue : nullptr));
  if (!reported) {  // the epilogue over the whole result, in fixed chunks over the pool
    constexpr int64_t kChunk = 1 << 16;
    const int64_t total = result->element_count(), chunks = (total + kChunk - 1) / kChunk;
    auto body = [&](int64_t lo, int64_t hi) {
      for (int64_t c = lo; c < hi; ++c) rows->Run(c * kChunk, 1, 0, std::min(kChunk, total - c * kChunk));
    };
    if (pool != nullptr && conv.threads != 1 && chunks > 1) pool->ParallelFor(chunks, 1, body);
    else body(0, chunks);
  }
  return Value::Array(std::move(result));
}

}  // namespace hlox::rt
