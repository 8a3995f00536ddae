// The fused loop's size limits, in one place: the runtime's fused evaluators apply them, and the
// analytical cost model (cost/fused_flops.cc) reads them to charge what the runtime does. Plain
// constants only, kept in common/ so that the cost model's core can include them without depending
// on the runtime (scripts/check_layers.py).
#pragma once

#include <cstdint>

namespace hlox::rt {

// Largest computed operand (elements) of a broadcast-like node that the block loop computes once
// per evaluator and gathers, when it is replicated at least 16x (fused/affine.cc).
constexpr int64_t kMaxHoistedElements = 16384;

// Largest computed source (elements) of an index map that the register path computes whole once
// per run (fused/vector_build.cc).
constexpr int64_t kMaxComputedSourceElements = int64_t{1} << 16;

// Output elements per block of the block loop (FusedRunOptions::block's default), the smallest
// block an elementwise pass shrinks to, and the bytes of one block's intermediates it keeps
// within (about L1) when it does (fused/run.cc ElementwiseBlock).
constexpr int64_t kDefaultBlockElements = 4096;
constexpr int64_t kMinElementwiseBlock = 1024;
constexpr int64_t kElementwiseBlockBytes = 40 << 10;

}  // namespace hlox::rt
