// The one opcode table of hlox. HLOX_OPCODE_LIST feeds the enum, the text spelling used by the
// parser and printer, the operand count the verifier checks and the elementwise classification
// the runtime and the passes use.
#pragma once

#include <optional>
#include <string_view>

namespace hlox {

inline constexpr int kVariadic = -1;

// X(Enum, "text", arity, kind): kind 'u' elementwise unary, 'b' elementwise binary,
// 't' elementwise ternary, 'o' anything else. Opcodes added later go at the end, so that the
// enum values of the others (exported as numbers in passes/features.cc and the decision sites'
// features) do not move.
#define HLOX_OPCODE_LIST(X)                                   \
  X(kAbs, "abs", 1, 'u')                                      \
  X(kAcos, "acos", 1, 'u')                                    \
  X(kAcosh, "acosh", 1, 'u')                                  \
  X(kAdd, "add", 2, 'b')                                      \
  X(kAddDependency, "add-dependency", 2, 'o')                 \
  X(kAfterAll, "after-all", kVariadic, 'o')                   \
  X(kAllGather, "all-gather", kVariadic, 'o')                 \
  X(kAllGatherStart, "all-gather-start", kVariadic, 'o')      \
  X(kAllGatherDone, "all-gather-done", 1, 'o')                \
  X(kAllReduce, "all-reduce", kVariadic, 'o')                 \
  X(kAllReduceStart, "all-reduce-start", kVariadic, 'o')      \
  X(kAllReduceDone, "all-reduce-done", 1, 'o')                \
  X(kAllToAll, "all-to-all", kVariadic, 'o')                  \
  X(kAnd, "and", 2, 'b')                                      \
  X(kAsin, "asin", 1, 'u')                                    \
  X(kAsinh, "asinh", 1, 'u')                                  \
  X(kAsyncStart, "async-start", kVariadic, 'o')               \
  X(kAsyncUpdate, "async-update", 1, 'o')                     \
  X(kAsyncDone, "async-done", 1, 'o')                         \
  X(kAtan, "atan", 1, 'u')                                    \
  X(kAtan2, "atan2", 2, 'b')                                  \
  X(kAtanh, "atanh", 1, 'u')                                  \
  X(kBatchNormGrad, "batch-norm-grad", 5, 'o')                \
  X(kBatchNormInference, "batch-norm-inference", 5, 'o')      \
  X(kBatchNormTraining, "batch-norm-training", 3, 'o')        \
  X(kBitcast, "bitcast", 1, 'o')                              \
  X(kBitcastConvert, "bitcast-convert", 1, 'o')               \
  X(kBroadcast, "broadcast", 1, 'o')                          \
  X(kCall, "call", kVariadic, 'o')                            \
  X(kCbrt, "cbrt", 1, 'u')                                    \
  X(kCeil, "ceil", 1, 'u')                                    \
  X(kCholesky, "cholesky", 1, 'o')                            \
  X(kClamp, "clamp", 3, 't')                                  \
  X(kClz, "count-leading-zeros", 1, 'u')                      \
  X(kCollectiveBroadcast, "collective-broadcast", kVariadic, 'o') \
  X(kCollectivePermute, "collective-permute", kVariadic, 'o') \
  X(kCollectivePermuteStart, "collective-permute-start", kVariadic, 'o') \
  X(kCollectivePermuteDone, "collective-permute-done", 1, 'o') \
  X(kCompare, "compare", 2, 'b')                              \
  X(kComplex, "complex", 2, 'b')                              \
  X(kConcatenate, "concatenate", kVariadic, 'o')              \
  X(kConditional, "conditional", kVariadic, 'o')              \
  X(kConstant, "constant", 0, 'o')                            \
  X(kConvert, "convert", 1, 'u')                              \
  X(kConvolution, "convolution", 2, 'o')                      \
  X(kCopy, "copy", 1, 'u')                                    \
  X(kCopyDone, "copy-done", 1, 'o')                           \
  X(kCopyStart, "copy-start", 1, 'o')                         \
  X(kCos, "cosine", 1, 'u')                                   \
  X(kCosh, "cosh", 1, 'u')                                    \
  X(kCustomCall, "custom-call", kVariadic, 'o')               \
  X(kDivide, "divide", 2, 'b')                                \
  X(kDomain, "domain", 1, 'o')                                \
  X(kDot, "dot", 2, 'o')                                      \
  X(kDynamicReshape, "dynamic-reshape", kVariadic, 'o')       \
  X(kDynamicSlice, "dynamic-slice", kVariadic, 'o')           \
  X(kDynamicUpdateSlice, "dynamic-update-slice", kVariadic, 'o') \
  X(kErf, "erf", 1, 'u')                                      \
  X(kExp, "exponential", 1, 'u')                              \
  X(kExpm1, "exponential-minus-one", 1, 'u')                  \
  X(kFft, "fft", 1, 'o')                                      \
  X(kFloor, "floor", 1, 'u')                                  \
  X(kFusion, "fusion", kVariadic, 'o')                        \
  X(kGather, "gather", 2, 'o')                                \
  X(kGetDimensionSize, "get-dimension-size", 1, 'o')          \
  X(kGetTupleElement, "get-tuple-element", 1, 'o')            \
  X(kImag, "imag", 1, 'u')                                    \
  X(kInfeed, "infeed", 1, 'o')                                \
  X(kIota, "iota", 0, 'o')                                    \
  X(kIsFinite, "is-finite", 1, 'u')                           \
  X(kLog, "log", 1, 'u')                                      \
  X(kLog1p, "log-plus-one", 1, 'u')                           \
  X(kLogistic, "logistic", 1, 'u')                            \
  X(kMap, "map", kVariadic, 'o')                              \
  X(kMaximum, "maximum", 2, 'b')                              \
  X(kMinimum, "minimum", 2, 'b')                              \
  X(kMulhi, "mulhi", 2, 'b')                                  \
  X(kMultiply, "multiply", 2, 'b')                            \
  X(kNegate, "negate", 1, 'u')                                \
  X(kNot, "not", 1, 'u')                                      \
  X(kOptimizationBarrier, "opt-barrier", 1, 'o')              \
  X(kOr, "or", 2, 'b')                                        \
  X(kOutfeed, "outfeed", 2, 'o')                              \
  X(kPad, "pad", 2, 'o')                                      \
  X(kParameter, "parameter", 0, 'o')                          \
  X(kPartitionId, "partition-id", 0, 'o')                     \
  X(kPopulationCount, "popcnt", 1, 'u')                       \
  X(kPower, "power", 2, 'b')                                  \
  X(kRaggedAllToAll, "ragged-all-to-all", 6, 'o')             \
  X(kRaggedDot, "ragged-dot", 3, 'o')                        \
  X(kReal, "real", 1, 'u')                                    \
  X(kRecv, "recv", 1, 'o')                                    \
  X(kRecvDone, "recv-done", 1, 'o')                           \
  X(kReduce, "reduce", kVariadic, 'o')                        \
  X(kReducePrecision, "reduce-precision", 1, 'u')             \
  X(kReduceScatter, "reduce-scatter", kVariadic, 'o')         \
  X(kReduceWindow, "reduce-window", kVariadic, 'o')           \
  X(kRemainder, "remainder", 2, 'b')                          \
  X(kReplicaId, "replica-id", 0, 'o')                         \
  X(kReshape, "reshape", 1, 'o')                              \
  X(kReverse, "reverse", 1, 'o')                              \
  X(kRng, "rng", 2, 'o')                                      \
  X(kRngBitGenerator, "rng-bit-generator", 1, 'o')            \
  X(kRngGetAndUpdateState, "rng-get-and-update-state", 0, 'o') \
  X(kRoundNearestAfz, "round-nearest-afz", 1, 'u')            \
  X(kRoundNearestEven, "round-nearest-even", 1, 'u')          \
  X(kRsqrt, "rsqrt", 1, 'u')                                  \
  X(kScaledDot, "scaled-dot", 4, 'o')                        \
  X(kScatter, "scatter", kVariadic, 'o')                      \
  X(kSelect, "select", 3, 't')                                \
  X(kSelectAndScatter, "select-and-scatter", 3, 'o')          \
  X(kSend, "send", 2, 'o')                                    \
  X(kSendDone, "send-done", 1, 'o')                           \
  X(kSetDimensionSize, "set-dimension-size", 2, 'o')          \
  X(kShiftLeft, "shift-left", 2, 'b')                         \
  X(kShiftRightArithmetic, "shift-right-arithmetic", 2, 'b')  \
  X(kShiftRightLogical, "shift-right-logical", 2, 'b')        \
  X(kSign, "sign", 1, 'u')                                    \
  X(kSin, "sine", 1, 'u')                                     \
  X(kSinh, "sinh", 1, 'u')                                    \
  X(kSlice, "slice", 1, 'o')                                  \
  X(kSort, "sort", kVariadic, 'o')                            \
  X(kSqrt, "sqrt", 1, 'u')                                    \
  X(kStochasticConvert, "stochastic-convert", 2, 'o')         \
  X(kSubtract, "subtract", 2, 'b')                            \
  X(kTan, "tan", 1, 'u')                                      \
  X(kTanh, "tanh", 1, 'u')                                    \
  X(kTopK, "topk", 1, 'o')                                    \
  X(kTranspose, "transpose", 1, 'o')                          \
  X(kTriangularSolve, "triangular-solve", 2, 'o')             \
  X(kTuple, "tuple", kVariadic, 'o')                          \
  X(kWhile, "while", 1, 'o')                                  \
  X(kXor, "xor", 2, 'b')                                      \
  X(kCollectiveReduce, "collective-reduce", kVariadic, 'o')   \
  X(kScan, "scan", kVariadic, 'o')                            \
  X(kShuffle, "shuffle", 1, 'o')

enum class Opcode : uint8_t {
#define HLOX_OPCODE_ENUM(e, s, a, k) e,
  HLOX_OPCODE_LIST(HLOX_OPCODE_ENUM)
#undef HLOX_OPCODE_ENUM
};

inline constexpr int kOpcodeCount = 0
#define HLOX_OPCODE_COUNT(e, s, a, k) +1
    HLOX_OPCODE_LIST(HLOX_OPCODE_COUNT)
#undef HLOX_OPCODE_COUNT
    ;

// Text spelling ("add", "get-tuple-element", ...).
std::string_view OpcodeName(Opcode op);
// Inverse of OpcodeName; nullopt for an unknown opcode.
std::optional<Opcode> ParseOpcode(std::string_view s);
// Fixed operand count, or kVariadic.
int OpcodeArity(Opcode op);
bool IsElementwiseUnary(Opcode op);
bool IsElementwiseBinary(Opcode op);
// Unary, binary or ternary elementwise (select, clamp included).
bool IsElementwise(Opcode op);

}  // namespace hlox
