// VectorProgram::Run (see fused/vector.h; Build is in fused/vector_build.cc): the sub-block
// loop that runs the op list over 16-lane registers, reading streamed inputs in place (bf16 /
// f16 ones widened per sub-block), gathering index-mapped inputs, prefetching ahead and
// writing big f32 outputs with non-temporal stores (half outputs narrowed on store), and the
// plain path (all inputs f32 in place, f32 outputs) that runs whole sub-blocks as micro-blocks.
#include "runtime/fused/vector.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <xmmintrin.h>

#include "runtime/fused/jit.h"
#include "runtime/fused/program_impl.h"
#include "runtime/fused/stream.h"
#include "runtime/fused/vector_ops.h"
#include "runtime/isa/isa_kernels.h"
#include "runtime/math/half.h"

namespace hlox::rt {
namespace {

using vecops::kOut;
using vecops::kStream;
using vecops::kTemp;

int64_t Elements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Temporaries are spaced kTempStride floats apart (not a multiple of 4 KiB / 4, so an op's
// loads and stores do not alias at the same page offset).
constexpr int64_t kTempStride = VectorProgram::kSubBlock + 16;
// Elements ahead of the current sub-block that each input is prefetched.
constexpr int64_t kPrefetchAhead = 2048;
// Fewest sub-blocks per parallel piece (smaller programs run on the calling thread).
constexpr int64_t kParallelGrain = 64;
// Elements a micro-block of the plain path runs every op over (a count its op functions are
// compiled for): the loads, math and stores of one micro-block interleave
// finely enough for one core to stream its inputs and output while it computes, where whole
// 256-element sub-blocks of ops do not. (On the 2-vCPU Ice Lake bench machine 128 with the
// count compiled in beat 64 and 256, and a runtime count, by 5-10% in interleaved runs.)
constexpr int64_t kMicro = vecops::kMicroValues;
// Elements ahead of the current micro-block that the plain path prefetches.
constexpr int64_t kMicroAhead = 1024;
static_assert(VectorProgram::kSubBlock % kMicro == 0);


// The element type of a buffer holding values of half type h (f32 for kNotHalf).
PrimitiveType HalfType(uint8_t h) {
  return h == fused::kHalfBf16 ? PrimitiveType::kBF16 : h == fused::kHalfF16 ? PrimitiveType::kF16 : PrimitiveType::kF32;
}

// One op of the plain path: fn over a + ma * pos, b + mb * pos into o + mo * pos (ma, mb, mo
// are 1 for streamed inputs and outputs, 0 for temporaries), then prefetch lines up to pf_end.
struct MicroStep {
  vecops::OpFn fn = nullptr;
  const float* a = nullptr;
  const float* b = nullptr;
  float* o = nullptr;
  int64_t ma = 0, mb = 0, mo = 0;
  int64_t pf_end = 0;
};

// Where a gather stopped: the coords of output index `next` and their operand index.
struct GatherState {
  int64_t next = -1;
  int64_t acc = 0;
  int64_t coords[16];
};

// dst[j] = src[map(start + j)] for j < n, where map is index-map node nd's operand index of
// an output index; walks the minor dim in runs (copied, filled or strided). Consecutive calls
// continue from *st without dividing. f32 sources are copied as they are; half ones (uint16_t
// bits of the type `half`) are widened.
template <typename Src>
void GatherAffine(const FusedNode& nd, const Src* src, uint8_t half, int64_t start, int64_t n, float* dst,
                  GatherState* st) {
  const auto type = static_cast<fused::HalfType>(half);
  auto wide = [type](Src v) -> float {
    if constexpr (std::is_same_v<Src, float>) return v;
    else return type == fused::kHalfF16 ? HalfToFloat(v) : fused::Bf16BitsToFloat(v);
  };
  const std::vector<int64_t>& dims = nd.map_dims;
  const std::vector<int64_t>& coef = nd.map_coef;
  const size_t last = dims.size() - 1;
  int64_t* coords = st->coords;
  if (st->next != start) {
    int64_t lin = start;
    st->acc = nd.offset;
    for (size_t d = 0; d <= last; ++d) {
      coords[d] = lin / nd.map_strides[d];
      lin -= coords[d] * nd.map_strides[d];
      st->acc += coords[d] * coef[d];
    }
  }
  int64_t acc = st->acc;
  const int64_t c = coef[last];
  for (int64_t j = 0; j < n;) {
    const int64_t len = std::min(n - j, dims[last] - coords[last]);
    if (c == 1) {
      if constexpr (std::is_same_v<Src, float>) {
        std::memcpy(dst + j, src + acc, static_cast<size_t>(len) * sizeof(float));
      } else {
        fused::HalfToF32(type, src + acc, dst + j, len);
      }
    } else if (c == 0) {
      std::fill_n(dst + j, len, wide(src[acc]));
    } else {
      for (int64_t k = 0; k < len; ++k) dst[j + k] = wide(src[acc + k * c]);
    }
    j += len;
    coords[last] += len;
    acc += len * c;
    for (size_t d = last; d > 0 && coords[d] == dims[d]; --d) {
      acc -= coords[d] * coef[d];
      coords[d] = 0;
      ++coords[d - 1];
      acc += coef[d - 1];
    }
  }
  st->acc = acc;
  st->next = start + n;
}

// Writes n floats of src to dst: non-temporal when `stream` and dst is 64-byte aligned.
inline void StoreOut(float* dst, const float* src, int64_t n, bool stream) {
  if (stream && (reinterpret_cast<uintptr_t>(dst) & 63) == 0) {
    StreamStoreF32(dst, src, n);
    return;
  }
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

// A copy of a value to an output the plain path stores after the ops of a micro-block: n
// floats from src + ms * pos to dst + pos.
struct MicroCopy {
  const float* src = nullptr;
  int64_t ms = 0;
  float* dst = nullptr;
};

// The plain path over elements [start, start + n) (a multiple of kMicro): every step over one
// micro-block before the next, prefetching pf[l] + 4 * pos for line l (the lines of the
// micro-block kMicroAhead elements ahead, spread over the steps) while pos + kMicroAhead is
// inside `total` elements and `prefetch`.
void RunMicroBlocks(const std::vector<MicroStep>& steps, const std::vector<const char*>& pf,
                    const std::vector<MicroCopy>& copies, int64_t start, int64_t n, int64_t total,
                    bool prefetch, bool stream) {
  for (int64_t pos = start; pos < start + n; pos += kMicro) {
    const bool ahead = prefetch && pos + kMicroAhead + kMicro <= total;
    int64_t line = 0;
    for (const MicroStep& st : steps) {
      st.fn(st.a + st.ma * pos, st.b + st.mb * pos, st.o + st.mo * pos, kMicro);
      if (!ahead) continue;
      for (; line < st.pf_end; ++line) _mm_prefetch(pf[line] + 4 * pos, _MM_HINT_T0);
    }
    for (const MicroCopy& c : copies) StoreOut(c.dst + pos, c.src + c.ms * pos, kMicro, stream);
  }
}

// The plain path's steps with one chunk's temporaries, the prefetch lines spread over them,
// and the copies to outputs no op writes directly.
struct MicroPlan {
  std::vector<MicroStep> steps;
  std::vector<const char*> pf;
  std::vector<MicroCopy> copies;
};

MicroPlan BuildMicroPlan(const std::vector<VectorProgram::Op>& ops,
                         const std::vector<VectorProgram::Slot>& output_slots,
                         const std::vector<char>& direct, const IsaKernels& kernels,
                         const std::vector<const float*>& base, const std::vector<Buffer*>& out,
                         bool big, float* temps) {
  MicroPlan plan;
  const int64_t ninputs = static_cast<int64_t>(base.size());
  auto at = [&](const VectorProgram::Slot& sl, int64_t* moves) -> const float* {
    *moves = sl.input ? 1 : 0;
    return sl.input ? base[sl.index] : temps + sl.index * kTempStride;
  };
  const int64_t lines = ninputs * (kMicro * 4 / 64);
  const int64_t nops = static_cast<int64_t>(ops.size());
  for (int64_t l = 0; l < lines; ++l) {  // line l: input l % ninputs, line l / ninputs
    plan.pf.push_back(reinterpret_cast<const char*>(base[l % ninputs] + kMicroAhead) + 64 * (l / ninputs));
  }
  for (int64_t j = 0; j < nops; ++j) {
    const VectorProgram::Op& op = ops[j];
    MicroStep st;
    st.a = at(op.a, &st.ma);
    st.b = at(op.b, &st.mb);
    vecops::StoreMode mode = kTemp;
    if (op.out >= 0) {
      st.o = out[op.out]->as<float>();
      st.mo = 1;
      mode = big && (reinterpret_cast<uintptr_t>(st.o) & 63) == 0 ? kStream : kOut;
    } else {
      st.o = temps + op.dst * kTempStride;
    }
    st.fn = kernels.op(op.code, mode, true);
    st.pf_end = ((j + 1) * lines) / std::max<int64_t>(1, nops);
    plan.steps.push_back(st);
  }
  for (size_t k = 0; k < out.size(); ++k) {
    if (direct[k]) continue;
    MicroCopy c;
    c.src = at(output_slots[k], &c.ms);
    c.dst = out[k]->as<float>();
    plan.copies.push_back(c);
  }
  return plan;
}

// Points in[i] at input i's values for elements [start, start + n) of a sub-block: in place
// when it is an f32 array read at the output's indices and the sub-block is whole, otherwise a
// copy in staging + i * kTempStride (half inputs widened, index maps gathered), zero-padded to
// whole registers.
void StageInputs(const std::vector<VectorProgram::Input>& inputs, const std::vector<FusedNode>& nodes,
                 const std::vector<const float*>& base, int64_t start, int64_t n, float* staging,
                 GatherState* gather, const float** in) {
  constexpr int64_t S = VectorProgram::kSubBlock;
  const int64_t ninputs = static_cast<int64_t>(base.size());
  for (int64_t i = 0; i < ninputs; ++i) {
    if (inputs[i].half) {  // widened into the staging copy
      float* st = staging + i * kTempStride;
      const uint16_t* src = reinterpret_cast<const uint16_t*>(base[i]);
      const uint8_t h = inputs[i].half;
      if (inputs[i].affine >= 0) {
        GatherAffine(nodes[inputs[i].affine], src, h, start, n, st, &gather[i]);
      } else {
        fused::HalfToF32(static_cast<fused::HalfType>(h), src + start, st, n);
      }
      if (n < S) std::fill(st + n, st + S, 0.0f);
      in[i] = st;
      continue;
    }
    if (inputs[i].affine >= 0) {
      float* st = staging + i * kTempStride;
      GatherAffine(nodes[inputs[i].affine], base[i], 0, start, n, st, &gather[i]);
      if (n < S) std::fill(st + n, st + S, 0.0f);
      in[i] = st;
      continue;
    }
    if (n == S) {
      in[i] = base[i] + start;
      continue;
    }
    float* st = staging + i * kTempStride;  // zero-padded to whole registers
    std::memcpy(st, base[i] + start, static_cast<size_t>(n) * 4);
    std::fill(st + n, st + S, 0.0f);
    in[i] = st;
  }
}

}  // namespace

VectorProgram::~VectorProgram() = default;

bool VectorProgram::BindInputs(const std::vector<FusedNode>& nodes,
                               const std::vector<const Buffer*>& params, int64_t total,
                               std::vector<std::vector<float>>* computed,
                               std::vector<const float*>* base, int64_t* streamed) const {
  // Computed operands of index maps, evaluated whole by the block evaluator.
  computed->assign(inputs_.size(), {});
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (!inputs_[i].computed) continue;
    const int64_t cnt = Elements(nodes[inputs_[i].node].dims);
    BlockEval ev(nodes, params, t_arena);
    ev.NewBlock();
    IndexSet all{cnt, 0, nullptr, ev.NewSetId()};
    const float* v = static_cast<const float*>(ev.Eval(inputs_[i].node, all));
    (*computed)[i].assign(v, v + cnt);
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Input& in = inputs_[i];
    *streamed += in.affine < 0;
    if (in.computed) {
      base->push_back((*computed)[i].data());
      continue;
    }
    if (in.param < 0) {
      base->push_back(nodes[in.node].cf.data());
      continue;
    }
    if (in.param >= static_cast<int64_t>(params.size())) return false;
    const Buffer* b = params[in.param];
    // An index map reads its source at the source's own shape.
    const int64_t want = in.affine < 0 ? total : Elements(nodes[nodes[in.affine].operands[0]].dims);
    const PrimitiveType t = HalfType(in.half);
    if (b == nullptr || b->shape().element_type() != t || b->element_count() != want) return false;
    // Half sources are held as their bits (widened per sub-block).
    base->push_back(reinterpret_cast<const float*>(b->data()));
  }
  return true;
}

std::vector<float> VectorProgram::EvalScalars(const std::vector<FusedNode>& nodes,
                                              const std::vector<const Buffer*>& params) const {
  std::vector<float> scalars;
  if (!scalar_nodes_.empty()) {
    BlockEval ev(nodes, params, t_arena);
    ev.NewBlock();
    IndexSet one{1, 0, nullptr, ev.NewSetId()};
    for (int id : scalar_nodes_) scalars.push_back(*static_cast<const float*>(ev.Eval(id, one)));
  }
  return scalars;
}

bool VectorProgram::Run(const std::vector<FusedNode>& nodes, const std::vector<const Buffer*>& params,
                        std::vector<BufferPtr>& out, ThreadPool* pool,
                        const FusedRunOptions& options) const {
  const IsaKernels& kernels = Kernels();
  if (out.size() != output_slots_.size() || out.empty()) return false;
  Bound bd;
  bd.total = out[0]->element_count();
  for (size_t k = 0; k < out.size(); ++k) {
    const PrimitiveType t = HalfType(out_half_[k]);
    if (out[k]->shape().element_type() != t || out[k]->element_count() != bd.total) return false;
    bd.out.push_back(out[k].get());
  }
  if (!BindInputs(nodes, params, bd.total, &bd.computed, &bd.base, &bd.streamed)) return false;
  bd.scalars = EvalScalars(nodes, params);
  // The plain path: every input read in place at the output's indices, f32 outputs.
  bd.plain = options.micro_blocks && plain_;
  const int64_t streams = bd.streamed + static_cast<int64_t>(out.size());
  bd.big = streams * bd.total * 4 >= kStreamStoreBytes;
  // Generated code for whole sub-blocks of the plain path: its pointers and memory variant.
  // (The code was generated for the level active at Build: only that level runs it.)
  bd.jit = bd.plain && jit_ != nullptr && options.jit && jit_->level() == kernels.level;
  if (bd.jit) {
    bool aligned = true;
    for (const BufferPtr& o : out) {
      bd.out_ptrs.push_back(o->as<float>());
      aligned = aligned && (reinterpret_cast<uintptr_t>(bd.out_ptrs.back()) & 63) == 0;
    }
    bd.variant = !bd.big ? FusedJit::kCached : aligned ? FusedJit::kPrefetchStream : FusedJit::kPrefetch;
  }
  constexpr int64_t S = kSubBlock;
  const int64_t nsub = (bd.total + S - 1) / S;
  auto body = [&](int64_t s0, int64_t s1) { RunSpan(nodes, bd, s0 * S, 1, 0, std::min(s1 * S, bd.total) - s0 * S); };
  if (pool == nullptr || options.threads == 1 || pool->threads() == 1) {
    body(0, nsub);
  } else {
    // Pieces claimed in turn (fused/stream.h): a thread that wakes late takes fewer of them
    // rather than leaving the others a fixed share's tail.
    ParallelPieces(pool, nsub, kParallelGrain, body);
  }
  return true;
}

bool VectorProgram::BindRange(const std::vector<FusedNode>& nodes, const std::vector<const Buffer*>& params,
                              Buffer& out, Bound* bd) const {
  if (output_slots_.size() != 1 || out.shape().element_type() != HalfType(out_half_[0])) return false;
  bd->total = out.element_count();
  bd->out = {&out};
  if (!BindInputs(nodes, params, bd->total, &bd->computed, &bd->base, &bd->streamed)) return false;
  bd->scalars = EvalScalars(nodes, params);
  bd->plain = plain_;
  bd->big = false;
  bd->jit = plain_ && jit_ != nullptr && jit_->level() == Kernels().level;
  if (bd->jit) bd->out_ptrs = {out.as<float>()};
  bd->variant = FusedJit::kCached;
  return true;
}

void VectorProgram::RunRange(const std::vector<FusedNode>& nodes, const Bound& bound, int64_t first, int64_t rows,
                             int64_t stride, int64_t len) const {
  RunSpan(nodes, bound, first, rows, stride, len);
}

void VectorProgram::RunSpan(const std::vector<FusedNode>& nodes, const Bound& bd, int64_t first, int64_t rows,
                            int64_t stride, int64_t len) const {
  const IsaKernels& kernels = Kernels();
  constexpr int64_t S = kSubBlock;
  const std::vector<const float*>& base = bd.base;
  const std::vector<Buffer*>& out = bd.out;
  const int64_t ninputs = static_cast<int64_t>(base.size());
  const bool big = bd.big;
  // Whole sub-blocks of a run as machine code; returns where the rest of the run starts.
  auto jit_run = [&](int64_t begin, int64_t end) {
    if (!bd.jit) return begin;
    FusedJit::Args args;
    args.in = base.data();
    args.out = bd.out_ptrs.data();
    args.scalars = bd.scalars.data();
    args.begin = begin;
    args.end = begin + (end - begin) / S * S;
    if (args.end > args.begin) jit_->Run(args, static_cast<FusedJit::Variant>(bd.variant));
    return std::max(begin, args.end);
  };
  if (rows == 1) {  // one run: all of it as machine code when it is whole sub-blocks
    const int64_t rest = jit_run(first, first + len);
    len -= rest - first;
    first = rest;
    if (len <= 0) return;
  }
  Arena& arena = t_arena;
  arena.Reset();
  // Temporaries, then one staging copy per input for a partial last sub-block.
  float* temps = static_cast<float*>(arena.Alloc((temps_ + ninputs) * kTempStride * 4));
  float* staging = temps + temps_ * kTempStride;
  for (size_t k = 0; k < bd.scalars.size(); ++k) {
    std::fill_n(temps + scalar_temps_[k] * kTempStride, S, bd.scalars[k]);
  }
  std::vector<const float*> in(ninputs);
  std::vector<GatherState> gather(ninputs);
  auto ptr = [&](const Slot& sl) -> const float* {
    return sl.input ? in[sl.index] : temps + sl.index * kTempStride;
  };
  MicroPlan micro;
  if (bd.plain && !bd.jit) micro = BuildMicroPlan(ops_, output_slots_, direct_, kernels, base, out, big, temps);
  // One sub-block [start, start + n), n <= S.
  auto sub_block = [&](int64_t start, int64_t n) {
    if (bd.plain && n == S) {
      RunMicroBlocks(micro.steps, micro.pf, micro.copies, start, S, bd.total, big, big);
      return;
    }
    // Prefetch lines of this sub-block's share, spread over its ops (a burst of prefetches
    // would wait for fill buffers and hold up the math behind it).
    int64_t pf_lines = 0, pf_next = 0;
    if (big && start + kPrefetchAhead < bd.total) {
      pf_lines = (std::min(S, bd.total - start - kPrefetchAhead) * 4 + 63) / 64;
    }
    auto prefetch = [&](int64_t upto) {  // issues lines [pf_next, upto) of every input
      for (; pf_next < upto && pf_next < pf_lines; ++pf_next) {
        for (int64_t i = 0; i < ninputs; ++i) {
          if (inputs_[i].affine >= 0) continue;
          const int64_t esize = inputs_[i].half ? 2 : 4;
          if (esize == 2 && 2 * pf_next >= pf_lines) continue;  // a half input has half the lines
          _mm_prefetch(reinterpret_cast<const char*>(base[i]) + (start + kPrefetchAhead) * esize + 64 * pf_next,
                       _MM_HINT_T0);
        }
      }
    };
    StageInputs(inputs_, nodes, base, start, n, staging, gather.data(), in.data());
    const int64_t padded = (n + 15) / 16 * 16;  // values an op runs over (zero-padded)
    const bool whole = n == S;
    const int64_t nops = static_cast<int64_t>(ops_.size());
    int64_t opi = 0;
    for (const Op& op : ops_) {
      prefetch((++opi * pf_lines + nops - 1) / std::max<int64_t>(1, nops));
      if (whole && op.out >= 0) {  // straight into the output
        float* dst = out[op.out]->as<float>() + start;
        const bool aligned = (reinterpret_cast<uintptr_t>(dst) & 63) == 0;
        kernels.op(op.code, big && aligned ? kStream : kOut, false)(ptr(op.a), ptr(op.b), dst, padded);
        continue;
      }
      kernels.op(op.code, kTemp, false)(ptr(op.a), ptr(op.b), temps + op.dst * kTempStride, padded);
    }
    for (size_t k = 0; k < out.size(); ++k) {
      if (whole && direct_[k]) continue;
      if (out_half_[k]) {
        fused::F32ToHalf(static_cast<fused::HalfType>(out_half_[k]), ptr(output_slots_[k]),
                         out[k]->as<uint16_t>() + start, n);
        continue;
      }
      StoreOut(out[k]->as<float>() + start, ptr(output_slots_[k]), n, big);
    }
  };
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t row_end = first + r * stride + len;
    const int64_t row_begin = rows == 1 ? first : jit_run(first + r * stride, row_end);
    for (int64_t start = row_begin; start < row_end; start += S) sub_block(start, std::min(S, row_end - start));
  }
  if (big) StreamFence();
}

}  // namespace hlox::rt
