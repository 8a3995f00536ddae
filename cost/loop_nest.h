// Kernels as tiled loop nests, for the scratchpad traffic model and its simulator
// (cost/scratchpad.h). A kernel (an unfused instruction or a fusion) iterates over a box of loop
// indices; every tensor it reads or writes is touched through an affine index map, one per
// dimension of the tensor's bytes in memory order (its "view"):
//   index_d = sum over terms (coeff x loop index) + offset, touched only when 0 <= index_d < dim_d
// which covers dot, convolution (out x stride + window x dilation - padding), reduce,
// reduce-window, elementwise ops, broadcast (dims without terms), transpose (the view follows
// the tensor's layout), slice (start + stride x index), pad and concatenate (offsets; what
// falls outside is not touched), reverse (coefficient -1), and reshape and bitcast (the operand
// is viewed with the result's dims: same bytes in row-major order). What has no affine map
// (gather, dynamic slices, scatter, sort, custom calls, ops under a reduce inside a fusion...)
// is an opaque access: the bytes it touches, once per kernel.
//
// The loops run in the nest's order (outermost first), each in tiles: one step of the nest is
// one tile of every loop. The tiling (tile sizes and loop order) is a decision: the
// `scratchpad-tiling` pass writes the choice's name as backend_config key "hlox_sp_tiling",
// and BuildLoopNest applies it; without the key the native tiling applies.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cost/kernel_model.h"
#include "ir/module.h"

namespace hlox::sp {

struct Loop {
  int64_t extent = 1;
  int64_t tile = 1;
  bool reduction = false;  // the output does not depend on it (partial results are revisited)
  int64_t Trips() const { return (extent + tile - 1) / tile; }
};

struct IndexTerm {
  int loop = 0;
  int64_t coeff = 1;
};
struct DimIndex {
  std::vector<IndexTerm> terms;
  int64_t offset = 0;
};

struct Access {
  TensorId tensor;
  int64_t elem_bytes = 4;
  std::vector<int64_t> dims;     // the view's dims, major to minor (row-major over the bytes)
  std::vector<DimIndex> index;   // one per view dim
  bool write = false;
  bool opaque = false;           // no affine map: opaque_bytes of the tensor, once per kernel
  int64_t opaque_bytes = 0;
  bool DependsOn(int loop) const;
};

struct LoopNest {
  const Instruction* instr = nullptr;
  std::vector<Loop> loops;       // outermost first
  std::vector<Access> accesses;
  std::string tiling = "native"; // the tiling's name
};

// The tilings (passes/fusion/scratchpad_tiling.cc offers them): "native", the default policy
// (natural loop order with the reduction loops innermost; the two innermost output loops of more than one iteration tiled
// 128 x 512, as a 128-row systolic array's partitions by a 512-element free dimension, the
// innermost reduction loop 128, every other loop 1), then per loop order ("out": reduction loops
// innermost, output-stationary; "in0"/"in1": the loops that the kernel's first / second read
// tensor does not use innermost, so its tile stays; without such a tensor the out order) tiles
// grown to fill the whole scratchpad ("_l") or an eighth of it ("_s") with one step's data (the
// stationary tile is reused while a step's data fits; the rest streams through).
const std::vector<std::string>& TilingNames();
// Sets tiles and loop order by name; false (and native) for an unknown name.
bool ApplyTiling(LoopNest& nest, const std::string& name, int64_t scratchpad_bytes);

// The nest of kernel `k` (a fusion, or one instruction reading `k.reads`) with its tiling:
// backend_config "hlox_sp_tiling" when present, else native. Control-flow kernels
// are not nests (the caller costs their bodies).
LoopNest BuildLoopNest(const Kernel& k, int64_t scratchpad_bytes);
// "t/e r t/e ...": each loop's tile and extent in loop order, reduction loops marked r.
std::string DescribeTiles(const LoopNest& nest);
// The value of string key `key` in the instruction's backend_config ("" when absent): the
// tiling's "hlox_sp_tiling", the staging decision's "hlox_sp_stage".
std::string BackendKey(const Instruction& instr, std::string_view key);
inline std::string TilingKey(const Instruction& instr) { return BackendKey(instr, "hlox_sp_tiling"); }
// Moves loop `loop` outermost with tile `tile`; the other loops keep their order and tiles.
void MoveLoopOutermost(LoopNest& nest, int loop, int64_t tile);

// ---- Boxes: what one tile step (or a range of steps) touches ----

// A box of loop indices: per loop, [lo, lo + len).
struct Box {
  std::vector<int64_t> lo, len;
};
// Distinct index values of view dim `d` of `a` over `box`, ascending, clipped to [0, dim).
std::vector<int64_t> DimValues(const Access& a, int d, const Box& box);
// The lines of `line` bytes that `a` touches over `box`, as ascending disjoint ranges
// [first, last] of line numbers relative to the tensor's start (which sits on a line boundary);
// appended to `runs` (cleared first). For an opaque access: its first opaque_bytes.
void BoxLineRuns(const Access& a, const Box& box, int64_t line, std::vector<std::pair<int64_t, int64_t>>* runs);
// How many lines those are.
int64_t BoxLines(const Access& a, const Box& box, int64_t line);
// The same count in closed form (no enumeration, for boxes of any size): per view dim the count,
// first value and spacing of its index values; groups of inner dims merge where the gap between
// them is under a line; separate groups at offsets that are not multiples of a line are counted
// at each offset of their cycle. Exact for affine single-term maps whose groups' lines are
// dense; multi-term dims (windows) are taken as dense ranges when their terms cover them.
double ApproxBoxLines(const Access& a, const Box& box, int64_t line);

}  // namespace hlox::sp
