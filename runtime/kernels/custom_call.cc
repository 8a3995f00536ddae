// custom-call dispatch on custom_call_target. Unknown targets are an Unimplemented error naming
// the target, never zeros. AwsNeuronTransferWithStaticRing is an identity: it shares its
// operand's buffer when the result shape equals it (values are immutable), else copies. Two test-only
// targets exist when HLOX_TEST_TARGETS=1: "__hlox$abort" (std::abort, to simulate a crashing
// kernel) and "__hlox$hang" (sleeps forever, to exercise timeouts).
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "runtime/custom_call/targets.h"
#include "runtime/kernels/scalar_access.h"

namespace hlox::rt {
namespace {

bool TestTargetsEnabled() {
  const char* v = std::getenv("HLOX_TEST_TARGETS");
  return v != nullptr && std::string(v) == "1";
}

absl::StatusOr<Value> Identity(const Instruction& instr, const std::vector<const Value*>& operands,
                               KernelContext&) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* in, ArrayOperand(instr, operands, 0));
  const Shape& os = instr.shape();
  if (!os.IsArray() || os.ElementCount() != in->element_count()) {
    return KernelError(instr, "identity custom call needs a result like its operand");
  }
  if (os == in->shape()) return *operands[0];  // no copy: buffers are never written once made
  Value out = NewArray(os);
  if (os.element_type() == in->shape().element_type()) {
    if (in->byte_size() > 0) std::memcpy(out.array->data(), in->data(), in->byte_size());
  } else {
    for (int64_t i = 0; i < in->element_count(); ++i) StoreDouble(*out.array, i, LoadDouble(*in, i));
  }
  return out;
}

CustomCallFn Lookup(const std::string& t) {
  if (t == "cuda_threefry2x32") return &CcThreefry2x32;
  if (t == "__cublas$gemm") return &CcCublasGemm;
  if (t == "cublas_trsm_batched") return &CcTrsmBatched;
  if (t == "cusolver_getrf" || t == "cublas_getrf_batched") return &CcGetrf;
  if (t == "cuda_lu_pivots_to_permutation") return &CcPivotsToPermutation;
  if (t == "cusolver_geqrf") return &CcGeqrf;
  if (t == "cusolver_orgqr") return &CcOrgqr;
  if (t == "cusolver_potrf") return &CcPotrf;
  if (t == "AwsNeuronGelu" || t == "AwsNeuronGeluApprxTanh" || t == "AwsNeuronGeluBackward") return &CcNeuronGelu;
  if (t == "AwsNeuronRmsNorm") return &CcNeuronRmsNorm;
  if (t == "AwsNeuronTransferWithStaticRing") return &Identity;
  return nullptr;
}

}  // namespace

Shape ResultLeafShape(const Shape& result, int64_t i) {
  return result.IsTuple() ? result.tuple_shape(i) : result;
}

Value ZeroedResult(const Shape& result) {
  if (result.IsTuple()) {
    std::vector<Value> elems;
    for (const Shape& s : result.tuple_shapes()) elems.push_back(ZeroedResult(s));
    return Value::Tuple(std::move(elems));
  }
  if (!result.IsArray()) return Value::Token();
  Value v = NewArray(result);
  if (v.array->byte_size() > 0) std::memset(v.array->data(), 0, v.array->byte_size());
  return v;
}

Buffer& ResultLeaf(Value& v, int64_t i) { return v.is_tuple ? *v.tuple[i].array : *v.array; }

int32_t BackendConfigInt32(const Instruction& instr, size_t offset, int32_t dflt) {
  const std::string& c = instr.attrs().backend_config;
  if (c.size() < offset + 4) return dflt;
  int32_t v;
  std::memcpy(&v, c.data() + offset, 4);
  return v;
}

absl::StatusOr<Value> CustomCallKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                       KernelContext& ctx) {
  const std::string& target = instr.attrs().custom_call_target;
  if (TestTargetsEnabled()) {
    if (target == "__hlox$abort") std::abort();
    if (target == "__hlox$hang") {
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    }
  }
  CustomCallFn fn = Lookup(target);
  if (fn == nullptr) {
    return absl::UnimplementedError(absl::StrCat("unknown custom-call target '", target, "' (instruction ",
                                                 instr.name(), ")"));
  }
  return fn(instr, operands, ctx);
}

}  // namespace hlox::rt
