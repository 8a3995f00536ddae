// The register path of the fused loop, for fused programs whose outputs are pure f32, bf16 or
// f16 elementwise math (kLoop fusions such as exp(tanh(2x+1)*y)-z). bf16/f16 values are
// computed in f32 and rounded to their type after each op whose result is bf16/f16, exactly as
// the block loop and the unfused kernels round them (math/half.h); half inputs are widened
// per sub-block, half outputs narrowed on store. Build (fused/vector_build.cc) flattens the nodes into a
// straight-line program of vector ops over slots (streamed inputs read in place, scalars
// evaluated once per run, temporaries); Run walks the output in sub-blocks of kSubBlock
// elements, running every op of the program over the active level's vector registers
// (isa/isa_kernels.h) before the next sub-block,
// (index maps, such as row/column broadcasts, of a parameter, a constant or a small computed
// value are gathered per sub-block),
// so a sub-block's intermediates never leave L1 and the loads of one sub-block overlap the
// math of the previous ones. When every input is read in place (the plain path), whole
// sub-blocks run as 128-element micro-blocks through per-op function pointers, with the
// prefetches of the micro-block 1024 elements ahead spread over the ops: loads, math and
// non-temporal stores then interleave finely enough that one core streams while it computes
// (the 6-op chain went from 2.1x to 1.14-1.4x its floor on one thread). Inputs are
// prefetched a fixed distance ahead and big outputs are written with non-temporal stores.
// The math is the block loop's (vmath exp/tanh/erf/logistic/log, IEEE add/mul/div/sqrt), so
// results are bit-identical to it and independent of the thread count. Anything else (other types, index maps, compares) uses the block loop.
// When the plain path's ops compile to machine code (fused/jit.h: one loop that keeps every
// intermediate in registers), whole sub-blocks run that instead of the micro-blocks.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/cpu_isa.h"
#include "runtime/core/value.h"
#include "runtime/fused/node.h"
#include "runtime/fused/program.h"

namespace hlox::rt {

class FusedJit;  // fused/jit.h

class VectorProgram {
 public:
  ~VectorProgram();

  // Elements per sub-block (all ops of the program run over one before the next).
  static constexpr int64_t kSubBlock = 256;

  // The register program computing `outputs` of `nodes`, or null when some node they need is
  // not f32/bf16/f16 elementwise math this path implements or the outputs differ in element
  // count.
  static std::unique_ptr<VectorProgram> Build(const std::vector<FusedNode>& nodes,
                                              const std::vector<int>& outputs);

  // Computes every output into out[k] (f32/bf16/f16 buffers of the outputs' shapes). Returns false,
  // having written nothing, when the operands do not fit the program (a parameter of another
  // size or type); the caller then runs the block loop.
  bool Run(const std::vector<FusedNode>& nodes, const std::vector<const Buffer*>& params,
           std::vector<BufferPtr>& out, ThreadPool* pool, const FusedRunOptions& options) const;

  // The program bound to its operands and output buffers: where each input's values are (and
  // the computed inputs and scalars, evaluated once), for runs over parts of the output.
  struct Bound {
    std::vector<const float*> base;
    std::vector<std::vector<float>> computed;
    std::vector<float> scalars;
    std::vector<Buffer*> out;
    std::vector<float*> out_ptrs;  // f32 outputs, for the generated code
    int64_t total = 0;             // output elements
    int64_t streamed = 0;          // inputs read at the output's own indices
    bool plain = false, jit = false, big = false;
    uint8_t variant = 0;           // FusedJit::Variant
  };
  // Binds a program with one output for RunRange on parts of `out`, which may also be an
  // operand read at the output's own indices (each element is read before it is written: an
  // output fusion's epilogue updates the dot's or convolution's result in place). False when
  // the operands do not fit. Parts run in cache: no streaming stores.
  bool BindRange(const std::vector<FusedNode>& nodes, const std::vector<const Buffer*>& params, Buffer& out,
                 Bound* bound) const;
  // `rows` runs of `len` output elements, starting at linear index `first` and `stride` apart,
  // on the calling thread, the same bits as Run; safe on disjoint parts from several threads.
  void RunRange(const std::vector<FusedNode>& nodes, const Bound& bound, int64_t first, int64_t rows,
                int64_t stride, int64_t len) const;

  // Ops in the program (for tests).
  int64_t op_count() const { return static_cast<int64_t>(ops_.size()); }
  // Whether whole sub-blocks of the plain path run as generated machine code (fused/jit.h).
  bool has_jit() const { return jit_ != nullptr; }
  // Bytes of machine code the plain path compiles to for `level` (emitted, not run); 0 when it
  // does not compile there (see FusedProgram::jit_code_bytes_for).
  int64_t jit_code_bytes_for(IsaLevel level) const;

  // Where an op reads an operand: a streamed input (parameter or constant array, read at the
  // output's indices) or a sub-block temporary (scalars live in temporaries filled once).
  struct Slot {
    bool input = false;
    int64_t index = 0;  // inputs_ entry or temporary number
  };
  struct Op {
    uint8_t code = 0;  // VecCode (fused/vector_ops.h)
    Slot a, b;
    int64_t dst = 0;  // temporary number
    int64_t out = -1;  // output it also goes to directly (in whole sub-blocks), or -1
  };
  struct Input {
    int64_t param = -1;  // parameter number, or -1 for a constant array
    int node = -1;       // the constant's node
    int affine = -1;     // an index-map node (broadcast, slice, transpose) reading the input
    bool computed = false;  // `node` is a small computed value (evaluated whole per run)
    uint8_t half = 0;       // fused::HalfType of a bf16/f16 parameter, widened per sub-block
  };

 private:
  // Checks the parameters against the program's inputs and points base[i] at input i's values
  // (computed inputs evaluated whole into (*computed)[i]); *streamed counts the inputs read at
  // the output's own indices. False when a parameter does not fit.
  bool BindInputs(const std::vector<FusedNode>& nodes, const std::vector<const Buffer*>& params,
                  int64_t total, std::vector<std::vector<float>>* computed,
                  std::vector<const float*>* base, int64_t* streamed) const;
  // RunRange's work, and Run's for a piece (one run): each run in sub-blocks from its start
  // (whole ones as generated code when bound.jit), the temporaries set up once.
  void RunSpan(const std::vector<FusedNode>& nodes, const Bound& bound, int64_t first, int64_t rows, int64_t stride,
               int64_t len) const;
  // The scalar nodes' values, evaluated once per run by the block evaluator.
  std::vector<float> EvalScalars(const std::vector<FusedNode>& nodes,
                                 const std::vector<const Buffer*>& params) const;

  std::vector<Op> ops_;
  std::vector<Input> inputs_;
  std::vector<int> scalar_nodes_;       // evaluated once per run by the block evaluator
  std::vector<int64_t> scalar_temps_;   // temporary holding each scalar
  std::vector<Slot> output_slots_;      // one per output
  std::vector<char> direct_;            // per output: written by its op in whole sub-blocks
  std::vector<uint8_t> out_half_;       // per output: fused::HalfType, narrowed on store
  int64_t temps_ = 0;
  bool plain_ = false;                  // every input an f32 array read in place, f32 outputs
  std::unique_ptr<FusedJit> jit_;       // the plain path as machine code, when it compiles
};

}  // namespace hlox::rt
