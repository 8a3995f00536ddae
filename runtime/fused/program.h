// A fused computation compiled into a block program. Compile walks the fused computation once
// and turns every instruction into a node of a small vector-op program; Run evaluates the
// outputs block by block (a few thousand elements at a time), each block's intermediates
// living in a per-thread scratch arena that stays in L1/L2, and spreads blocks over the pool.
// Elementwise nodes run contiguous vector loops; broadcast/reshape/transpose/slice/reverse/
// dynamic-slice/pad/concatenate/iota are index maps; a reduce root (kInput) reduces per block.
// Values are held as float (f32, bf16, f16, rounded after each op), double (f64) or int64
// (pred and integers up to 32 bits, plus s64, wrapped after each op). Programs whose outputs
// are pure f32 elementwise math also get a register path (fused/vector.h), which Run prefers.
#pragma once

#include "common/cpu_isa.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/fused_limits.h"
#include "ir/computation.h"
#include "runtime/core/thread_pool.h"
#include "runtime/core/value.h"

namespace hlox::rt {

struct FusedNode;  // defined in fused/node.h

struct FusedRunOptions {
  int64_t block = kDefaultBlockElements;  // output elements per block (the register path has its own)
  int threads = 0;       // 0 = every pool thread, 1 = the calling thread only
  // Elementwise passes may use a smaller block, sized so one block's intermediates stay in
  // L1 (cleared when a backend_config names hlox_block).
  bool auto_block = true;
  // Pure f32 elementwise programs run on the register path (fused/vector.h); false forces
  // the block loop (for tests comparing the two).
  bool vector_path = true;
  // Outputs whose index map moves the minor dim (transposes) are walked in tiles
  // (fused/tile.cc); false walks them row by row (for tests and benches comparing the two).
  bool tiled = true;
  // Edge of those tiles (positions of the tile dim; tiles hold up to tile * tile elements).
  int64_t tile = 64;
  // The register path runs whole sub-blocks of programs whose inputs are all read in place as
  // 128-element micro-blocks (fused/vector.h); false runs every op over the whole sub-block
  // first (the path before micro-blocks, for tests and benches comparing the two).
  bool micro_blocks = true;
  // Whole sub-blocks of such programs run as generated machine code when it compiled
  // (fused/jit.h); false runs the micro-blocks' op functions (for tests and benches).
  bool jit = true;
};

class FusedProgram {
 public:
  // Compiles `comp` (a fused computation: arrays in, an array or a tuple of arrays out).
  // Unimplemented names the first instruction the block evaluator cannot handle; the caller
  // then falls back to running the computation unfused. `seed` fills elided constants.
  static absl::StatusOr<std::unique_ptr<FusedProgram>> Compile(const Computation& comp,
                                                               uint64_t seed);
  ~FusedProgram();

  // Evaluates the program on `operands` (one per parameter). `pool` may be null (serial).
  absl::StatusOr<Value> Run(const std::vector<const Value*>& operands, ThreadPool* pool,
                            const FusedRunOptions& options) const;

  // Whether BindRows can evaluate this program: one output (not a tuple), not a reduce.
  bool has_range_eval() const;
  // Parts of the single output of a program with has_range_eval(), evaluated into `out` on the
  // calling thread, `params` one per parameter. `out` may also be a parameter read at the
  // output's own indices (each element is read before it is written: an output fusion's
  // epilogue updates its dot's or convolution's result in place). Bound once: the register
  // path when the operands fit it (its computed inputs and scalars evaluated here), else the
  // block loop. The same bits as Run. Run is safe from several threads on disjoint runs.
  class Rows {
   public:
    virtual ~Rows() = default;
    // `rows` runs of `len` elements, starting at row-major linear index `first`, `stride` apart.
    virtual void Run(int64_t first, int64_t rows, int64_t stride, int64_t len) const = 0;
    // Whether runs take the register path (short runs are cheap there; the block loop pays a
    // block's setup per run).
    virtual bool registers() const = 0;
  };
  std::unique_ptr<Rows> BindRows(const std::vector<const Buffer*>& params, Buffer& out) const;

  int64_t node_count() const;
  // Whether Run can take the register path (fused/vector.h) for this program.
  bool has_vector_path() const;
  // Whether that path runs as generated machine code (fused/jit.h) for whole sub-blocks.
  bool has_jit_path() const;
  // Bytes of machine code the plain register path compiles to for `level` (generated, never
  // run: tests emit every level's code on any CPU); 0 when it does not compile there.
  int64_t jit_code_bytes_for(IsaLevel level) const;
  // Outputs that Run walks in tiles (transposing index maps, fused/tile.cc).
  int64_t tiled_output_count() const;

 private:
  FusedProgram();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Process-wide counters of FusionKernel (for reports and tests).
struct FusionKernelStats {
  int64_t fused_runs = 0;     // fusions executed as a fused block loop
  int64_t output_runs = 0;    // fusions executed as a dot with its epilogue (kernels/output_fusion.h)
  int64_t fallback_runs = 0;  // fusions executed unfused through the executor
  int64_t compiles = 0;       // programs compiled (cache misses)
};
FusionKernelStats GetFusionKernelStats();

// Reads {"hlox_block":N,"hlox_threads":T,"hlox_tile":E} keys from a backend_config string
// (hlox_tile 0: transposing outputs walked row by row; 8..256: the tile edge); keys missing or
// malformed keep the defaults in `options`.
void ParseFusedRunOptions(const std::string& backend_config, FusedRunOptions* options);

}  // namespace hlox::rt
