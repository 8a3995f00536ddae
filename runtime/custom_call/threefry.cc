// cuda_threefry2x32 (jaxlib's GPU kernel for jax.random's threefry hash): operands key0, key1,
// data0, data1 (u32 arrays; the keys may also be single elements), result (out0, out1) with
// (out0[i], out1[i]) = threefry2x32((key0[i], key1[i]), (data0[i], data1[i])), 20 rounds.
#include "runtime/custom_call/targets.h"
#include "runtime/kernels/rng_core.h"
#include "runtime/kernels/scalar_access.h"

namespace hlox::rt {

absl::StatusOr<Value> CcThreefry2x32(const Instruction& instr, const std::vector<const Value*>& operands,
                                     KernelContext& ctx) {
  if (operands.size() != 4) return KernelError(instr, "cuda_threefry2x32 takes 4 operands");
  const Buffer* in[4];
  for (size_t i = 0; i < 4; ++i) {
    HLOX_ASSIGN_OR_RETURN(in[i], ArrayOperand(instr, operands, i));
    if (in[i]->shape().element_type() != PrimitiveType::kU32) return KernelError(instr, "operands must be u32");
  }
  const Shape& os = instr.shape();
  const int64_t n = in[2]->element_count();
  if (!os.IsTuple() || os.tuple_size() != 2 || in[3]->element_count() != n ||
      ResultLeafShape(os, 0).ElementCount() != n || ResultLeafShape(os, 1).ElementCount() != n ||
      (in[0]->element_count() != n && in[0]->element_count() != 1) ||
      (in[1]->element_count() != n && in[1]->element_count() != 1)) {
    return KernelError(instr, "cuda_threefry2x32 operand/result sizes differ");
  }
  Value out = ZeroedResult(os);
  uint32_t* y0 = ResultLeaf(out, 0).as<uint32_t>();
  uint32_t* y1 = ResultLeaf(out, 1).as<uint32_t>();
  const uint32_t *k0 = in[0]->as<uint32_t>(), *k1 = in[1]->as<uint32_t>();
  const uint32_t *x0 = in[2]->as<uint32_t>(), *x1 = in[3]->as<uint32_t>();
  const bool k0b = in[0]->element_count() == 1 && n != 1, k1b = in[1]->element_count() == 1 && n != 1;
  KernelParallelFor(ctx, n, 16384, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      auto r = Threefry2x32(k0[k0b ? 0 : i], k1[k1b ? 0 : i], x0[i], x1[i]);
      y0[i] = r[0];
      y1[i] = r[1];
    }
  });
  return out;
}

}  // namespace hlox::rt
