// The explicit kernel table: opcode -> family kernel. A switch with no default, so -Wswitch
// flags any opcode added to ir/opcode.h that nobody wired in here. Opcodes with no CPU meaning
// (infeed, send, ...) get a kernel that returns Unimplemented naming the opcode.
#include "absl/strings/str_cat.h"
#include "runtime/core/executor.h"
#include "runtime/core/kernel.h"

namespace hlox::rt {
namespace {

absl::StatusOr<Value> UnimplementedKernel(const Instruction& instr, const std::vector<const Value*>&,
                                          KernelContext&) {
  return absl::UnimplementedError(absl::StrCat("hlox runtime: opcode '",
                                               std::string(OpcodeName(instr.opcode())),
                                               "' is not supported (instruction ", instr.name(), ")"));
}

// Parameters are bound by the executor, never computed by a kernel.
absl::StatusOr<Value> ParameterKernel(const Instruction& instr, const std::vector<const Value*>&,
                                      KernelContext&) {
  return absl::InternalError(absl::StrCat("parameter ", instr.name(), " reached a kernel"));
}

// Constants: the literal, or seeded values when the text elided them (the executor normally
// precomputes these once; this path serves computations run outside the executor's plan).
absl::StatusOr<Value> ConstantKernel(const Instruction& instr, const std::vector<const Value*>&,
                                     KernelContext& ctx);

}  // namespace

KernelFn KernelFor(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAbs:
      return &ElementwiseKernel;
    case Opcode::kAcos:
      return &ElementwiseKernel;
    case Opcode::kAcosh:
      return &ElementwiseKernel;
    case Opcode::kAsin:
      return &ElementwiseKernel;
    case Opcode::kAsinh:
      return &ElementwiseKernel;
    case Opcode::kAtanh:
      return &ElementwiseKernel;
    case Opcode::kCosh:
      return &ElementwiseKernel;
    case Opcode::kSinh:
      return &ElementwiseKernel;
    case Opcode::kAdd:
      return &ElementwiseKernel;
    case Opcode::kAddDependency:
      return &DataMovementKernel;
    case Opcode::kAfterAll:
      return &DataMovementKernel;
    case Opcode::kAllGather:
      return &CollectiveKernel;
    case Opcode::kAllGatherStart:
      return &CollectiveKernel;
    case Opcode::kAllGatherDone:
      return &CollectiveKernel;
    case Opcode::kAllReduce:
      return &CollectiveKernel;
    case Opcode::kAllReduceStart:
      return &CollectiveKernel;
    case Opcode::kAllReduceDone:
      return &CollectiveKernel;
    case Opcode::kAllToAll:
      return &CollectiveKernel;
    case Opcode::kRaggedAllToAll:
      return &CollectiveKernel;
    case Opcode::kAnd:
      return &ElementwiseKernel;
    case Opcode::kAsyncStart:
      return &ControlFlowKernel;
    case Opcode::kAsyncUpdate:
      return &ControlFlowKernel;
    case Opcode::kAsyncDone:
      return &ControlFlowKernel;
    case Opcode::kAtan:
      return &ElementwiseKernel;
    case Opcode::kAtan2:
      return &ElementwiseKernel;
    case Opcode::kBatchNormGrad:
      return &BatchNormKernel;
    case Opcode::kBatchNormInference:
      return &BatchNormKernel;
    case Opcode::kBatchNormTraining:
      return &BatchNormKernel;
    case Opcode::kBitcast:
      return &DataMovementKernel;
    case Opcode::kBitcastConvert:
      return &BitcastConvertKernel;
    case Opcode::kBroadcast:
      return &DataMovementKernel;
    case Opcode::kCall:
      return &ControlFlowKernel;
    case Opcode::kCbrt:
      return &ElementwiseKernel;
    case Opcode::kCeil:
      return &ElementwiseKernel;
    case Opcode::kCholesky:
      return &LinalgKernel;
    case Opcode::kClamp:
      return &ElementwiseKernel;
    case Opcode::kClz:
      return &ElementwiseKernel;
    case Opcode::kCollectiveBroadcast:
      return &CollectiveKernel;
    case Opcode::kCollectivePermute:
      return &CollectiveKernel;
    case Opcode::kCollectivePermuteStart:
      return &CollectiveKernel;
    case Opcode::kCollectivePermuteDone:
      return &CollectiveKernel;
    case Opcode::kCollectiveReduce:
      return &CollectiveKernel;
    case Opcode::kCompare:
      return &ElementwiseKernel;
    case Opcode::kComplex:
      return &ElementwiseKernel;
    case Opcode::kConcatenate:
      return &DataMovementKernel;
    case Opcode::kConditional:
      return &ControlFlowKernel;
    case Opcode::kConstant:
      return &ConstantKernel;
    case Opcode::kConvert:
      return &ConvertKernel;
    case Opcode::kConvolution:
      return &ConvolutionKernel;
    case Opcode::kCopy:
      return &DataMovementKernel;
    case Opcode::kCopyDone:
      return &DataMovementKernel;
    case Opcode::kCopyStart:
      return &DataMovementKernel;
    case Opcode::kCos:
      return &ElementwiseKernel;
    case Opcode::kCustomCall:
      return &CustomCallKernel;
    case Opcode::kDivide:
      return &ElementwiseKernel;
    case Opcode::kDomain:
      return &DataMovementKernel;
    case Opcode::kDot:
      return &DotKernel;
    case Opcode::kRaggedDot:
      return &RaggedDotKernel;
    case Opcode::kScaledDot:
      return &ScaledDotKernel;
    case Opcode::kScan:
      return &ControlFlowKernel;
    case Opcode::kDynamicReshape:
      return &DataMovementKernel;
    case Opcode::kDynamicSlice:
      return &DataMovementKernel;
    case Opcode::kDynamicUpdateSlice:
      return &DataMovementKernel;
    case Opcode::kErf:
      return &ElementwiseKernel;
    case Opcode::kExp:
      return &ElementwiseKernel;
    case Opcode::kExpm1:
      return &ElementwiseKernel;
    case Opcode::kFft:
      return &FftKernel;
    case Opcode::kFloor:
      return &ElementwiseKernel;
    case Opcode::kFusion:
      return &FusionKernel;
    case Opcode::kGather:
      return &GatherKernel;
    case Opcode::kGetDimensionSize:
      return &DataMovementKernel;
    case Opcode::kGetTupleElement:
      return &ControlFlowKernel;
    case Opcode::kImag:
      return &ElementwiseKernel;
    case Opcode::kInfeed:
      return &UnimplementedKernel;
    case Opcode::kIota:
      return &DataMovementKernel;
    case Opcode::kIsFinite:
      return &ElementwiseKernel;
    case Opcode::kLog:
      return &ElementwiseKernel;
    case Opcode::kLog1p:
      return &ElementwiseKernel;
    case Opcode::kLogistic:
      return &ElementwiseKernel;
    case Opcode::kMap:
      return &ControlFlowKernel;
    case Opcode::kMaximum:
      return &ElementwiseKernel;
    case Opcode::kMinimum:
      return &ElementwiseKernel;
    case Opcode::kMulhi:
      return &ElementwiseKernel;
    case Opcode::kMultiply:
      return &ElementwiseKernel;
    case Opcode::kNegate:
      return &ElementwiseKernel;
    case Opcode::kNot:
      return &ElementwiseKernel;
    case Opcode::kOptimizationBarrier:
      return &DataMovementKernel;
    case Opcode::kOr:
      return &ElementwiseKernel;
    case Opcode::kOutfeed:
      return &UnimplementedKernel;
    case Opcode::kPad:
      return &DataMovementKernel;
    case Opcode::kParameter:
      return &ParameterKernel;
    case Opcode::kPartitionId:
      return &CollectiveKernel;
    case Opcode::kPopulationCount:
      return &ElementwiseKernel;
    case Opcode::kPower:
      return &ElementwiseKernel;
    case Opcode::kReal:
      return &ElementwiseKernel;
    case Opcode::kRecv:
      return &UnimplementedKernel;
    case Opcode::kRecvDone:
      return &UnimplementedKernel;
    case Opcode::kReduce:
      return &ReduceKernel;
    case Opcode::kReducePrecision:
      return &ElementwiseKernel;
    case Opcode::kReduceScatter:
      return &CollectiveKernel;
    case Opcode::kReduceWindow:
      return &ReduceWindowKernel;
    case Opcode::kRemainder:
      return &ElementwiseKernel;
    case Opcode::kReplicaId:
      return &CollectiveKernel;
    case Opcode::kReshape:
      return &DataMovementKernel;
    case Opcode::kReverse:
      return &DataMovementKernel;
    case Opcode::kRng:
      return &RngKernel;
    case Opcode::kRngBitGenerator:
      return &RngKernel;
    case Opcode::kRngGetAndUpdateState:
      return &CollectiveKernel;
    case Opcode::kRoundNearestAfz:
      return &ElementwiseKernel;
    case Opcode::kRoundNearestEven:
      return &ElementwiseKernel;
    case Opcode::kRsqrt:
      return &ElementwiseKernel;
    case Opcode::kScatter:
      return &ScatterKernel;
    case Opcode::kSelect:
      return &ElementwiseKernel;
    case Opcode::kSelectAndScatter:
      return &SelectAndScatterKernel;
    case Opcode::kSend:
      return &UnimplementedKernel;
    case Opcode::kSendDone:
      return &UnimplementedKernel;
    case Opcode::kSetDimensionSize:
      return &DataMovementKernel;
    case Opcode::kShiftLeft:
      return &ElementwiseKernel;
    case Opcode::kShiftRightArithmetic:
      return &ElementwiseKernel;
    case Opcode::kShiftRightLogical:
      return &ElementwiseKernel;
    case Opcode::kShuffle:
      return &ShuffleKernel;
    case Opcode::kSign:
      return &ElementwiseKernel;
    case Opcode::kSin:
      return &ElementwiseKernel;
    case Opcode::kSlice:
      return &DataMovementKernel;
    case Opcode::kSort:
      return &SortKernel;
    case Opcode::kSqrt:
      return &ElementwiseKernel;
    case Opcode::kStochasticConvert:
      return &StochasticConvertKernel;
    case Opcode::kSubtract:
      return &ElementwiseKernel;
    case Opcode::kTan:
      return &ElementwiseKernel;
    case Opcode::kTanh:
      return &ElementwiseKernel;
    case Opcode::kTopK:
      return &SortKernel;
    case Opcode::kTranspose:
      return &DataMovementKernel;
    case Opcode::kTriangularSolve:
      return &LinalgKernel;
    case Opcode::kTuple:
      return &ControlFlowKernel;
    case Opcode::kWhile:
      return &ControlFlowKernel;
    case Opcode::kXor:
      return &ElementwiseKernel;
  }
  return &UnimplementedKernel;
}

namespace {
absl::StatusOr<Value> ConstantKernel(const Instruction& instr, const std::vector<const Value*>&,
                                     KernelContext& ctx) {
  if (!instr.has_literal()) return absl::InvalidArgumentError(absl::StrCat("constant ", instr.name(), " has no literal"));
  return ConstantValue(instr, ctx.seed);
}
}  // namespace

}  // namespace hlox::rt
