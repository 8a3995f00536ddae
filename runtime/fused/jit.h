// Machine code for the register path's plain programs (fused/vector.h): a VectorProgram whose
// inputs are all f32 arrays read at the output's own indices and whose outputs are f32 is
// compiled (Xbyak: zmm code for the AVX-512 level, ymm code for AVX2) into one loop that, per
// group of vector registers, loads each input once, runs every op of the program in registers
// and stores each output once. The
// micro-block interpreter stores every op's result to an L1 temporary and calls a function per
// op; on the 6-op chain exp(tanh(2x+1)*y)-z that costs about 1.5x the tanh/exp compute alone in
// L2, and the generated loop removes it. Each op is emitted as the same sequence of IEEE
// operations as its kernel (runtime/isa/simd/math.h: exp, tanh, logistic, NaN propagating
// max/min, bf16 rounding), so results are bit-identical to the interpreter and to the block
// loop. Programs with an op it does not emit (log, f16 rounding), more than
// kMaxStreams inputs plus outputs, or more live values than registers get no kernel; the
// interpreter runs them as before.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/cpu_isa.h"
#include "runtime/fused/vector.h"

namespace hlox::rt {

class FusedJit {
 public:
  // Inputs plus outputs a kernel can stream (one general register each).
  static constexpr int kMaxStreams = 8;

  // What a kernel call covers: elements [begin, end), a multiple of step() apart.
  struct Args {
    const float* const* in = nullptr;  // one per program input
    float* const* out = nullptr;       // one per program output
    const float* scalars = nullptr;    // one per program scalar temporary, in scalar order
    int64_t begin = 0, end = 0;
  };
  // How a kernel moves memory: `prefetch` the inputs kPrefetchAhead elements ahead, `stream`
  // the outputs with non-temporal stores (every output 64-byte aligned).
  enum Variant { kCached = 0, kPrefetch = 1, kPrefetchStream = 2 };
  static constexpr int64_t kPrefetchAhead = 1024;

  // Compiles the op list of a VectorProgram (ops over input slots and temporaries, the
  // temporaries scalar_temps holding scalars, output_slots naming each output's value); null
  // when the program is outside what the kernel emits (see above), the level has no code
  // generator, or the build has no Xbyak.
  // The code is for `level` (zmm for AVX-512, ymm for AVX2, none for generic); it may be
  // generated on any CPU but run only where the level is supported.
  static std::unique_ptr<FusedJit> Compile(const std::vector<VectorProgram::Op>& ops, int64_t inputs,
                                           const std::vector<int64_t>& scalar_temps,
                                           const std::vector<VectorProgram::Slot>& output_slots, IsaLevel level);
  ~FusedJit();

  // The instruction-set level the code was generated for (only that level may run it).
  IsaLevel level() const { return level_; }
  // Elements each loop iteration covers (the level's lanes x the registers unrolled per value).
  int64_t step() const { return step_; }
  // Bytes of machine code of all variants (for tests and reports).
  int64_t code_bytes() const;

  void Run(const Args& args, Variant variant) const;

  struct Code;  // one variant's generated code (fused/jit.cc)

 private:
  FusedJit() = default;
  std::unique_ptr<Code> code_[3];
  int64_t step_ = 0;
  IsaLevel level_ = IsaLevel::kGeneric;
};

}  // namespace hlox::rt
