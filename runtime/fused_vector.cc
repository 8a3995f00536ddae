// VectorProgram (see fused_vector.h): flattening a fused program's f32 elementwise nodes into
// a straight-line op list over slots, and the sub-block loop that runs it over 16-lane
// registers with input prefetch and non-temporal output stores.
// GCC 12 reports false maybe-uninitialized warnings inside Eigen's AVX-512 tanh/log.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "runtime/fused_vector.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "runtime/fused_half.h"
#include "runtime/fused_program_impl.h"
#include "runtime/fused_stream.h"
#include "runtime/fused_vector_ops.h"

namespace hlox::rt {
namespace {

using vecops::BinaryCode;
using vecops::UnaryCode;
#if defined(__AVX512F__)
using vecops::kOut;
using vecops::kStream;
using vecops::kTemp;
using vecops::RunOp;
#endif

int64_t Elements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// A value the op list refers to while it is built: an input, a scalar, or an op's result.
struct Ref {
  enum Kind : uint8_t { kInput, kScalar, kValue } kind = kInput;
  int64_t index = 0;
};

// Temporaries are spaced kTempStride floats apart (not a multiple of 4 KiB / 4, so an op's
// loads and stores do not alias at the same page offset).
constexpr int64_t kTempStride = VectorProgram::kSubBlock + 16;
// Elements ahead of the current sub-block that each input is prefetched.
constexpr int64_t kPrefetchAhead = 2048;
// Most elements of a computed operand of an index map (computed whole once per run).
constexpr int64_t kMaxComputedSource = int64_t{1} << 16;
// Fewest sub-blocks per parallel chunk (smaller programs run on the calling thread).
constexpr int64_t kParallelGrain = 64;

#if defined(__AVX512F__)
// Where a gather stopped: the coords of output index `next` and their operand index.
struct GatherState {
  int64_t next = -1;
  int64_t acc = 0;
  int64_t coords[16];
};

// dst[j] = src[map(start + j)] for j < n, where map is index-map node nd's operand index of
// an output index; walks the minor dim in runs (copied, filled or strided). Consecutive calls
// continue from *st without dividing.
template <typename Src>
void GatherAffine(const FusedNode& nd, const Src* src, int64_t start, int64_t n, float* dst,
                  GatherState* st) {
  // f32 sources are copied as they are; bf16 ones (uint16_t bits) are widened.
  auto wide = [](Src v) -> float {
    if constexpr (std::is_same_v<Src, float>) return v;
    else return fused::Bf16BitsToFloat(v);
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
        fused::Bf16ToF32(src + acc, dst + j, len);
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
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) _mm512_stream_ps(dst + j, _mm512_loadu_ps(src + j));
    if (j < n) std::memcpy(dst + j, src + j, static_cast<size_t>(n - j) * sizeof(float));
    return;
  }
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}
#endif

}  // namespace

std::unique_ptr<VectorProgram> VectorProgram::Build(const std::vector<FusedNode>& nodes,
                                                    const std::vector<int>& outputs) {
#if !defined(__AVX512F__)
  (void)nodes;
  (void)outputs;
  return nullptr;
#else
  if (outputs.empty()) return nullptr;
  const int64_t count = static_cast<int64_t>(nodes.size());
  for (int o : outputs) {
    if (o < 0 || o >= count || nodes[o].dims.empty()) return nullptr;
  }
  const int64_t total = Elements(nodes[outputs[0]].dims);
  // Nodes the outputs need: non-scalar ones become ops, scalars are evaluated once per run.
  std::vector<char> need(count, 0);  // 1: op/input, 2: scalar
  std::vector<int> stack(outputs.begin(), outputs.end());
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (need[id]) continue;
    const FusedNode& nd = nodes[id];
    if (nd.kind != VKind::kF32) return nullptr;
    if (nd.dims.empty()) {
      need[id] = 2;
      continue;
    }
    if ((nd.type != PrimitiveType::kF32 && nd.type != PrimitiveType::kBF16) || Elements(nd.dims) != total) {
      return nullptr;
    }
    need[id] = 1;
    if (nd.op == NodeOp::kAffine && !nd.op_dims.empty()) continue;  // gathers its source
    for (int o : nd.operands) {
      if (o < 0 || o >= count) return nullptr;
      stack.push_back(o);
    }
  }
  auto prog = std::unique_ptr<VectorProgram>(new VectorProgram());
  struct Pending {
    uint8_t code;
    Ref a, b;
  };
  std::vector<Pending> pending;
  std::vector<Ref> ref(count);
  // Appends a rounding to bf16 of node `id`'s value, which becomes the node's value.
  auto round_bf16 = [&](int64_t id) {
    const Ref v = ref[id];
    ref[id] = Ref{Ref::kValue, static_cast<int64_t>(pending.size())};
    pending.push_back(Pending{vecops::kRoundBf16, v, v});
  };
  for (int64_t id = 0; id < count; ++id) {
    if (!need[id]) continue;
    const FusedNode& nd = nodes[id];
    if (need[id] == 2) {
      ref[id] = Ref{Ref::kScalar, static_cast<int64_t>(prog->scalar_nodes_.size())};
      prog->scalar_nodes_.push_back(static_cast<int>(id));
      continue;
    }
    auto operand = [&](size_t i) { return ref[nd.operands[i]]; };
    uint8_t code = 0;
    switch (nd.op) {
      case NodeOp::kParam:
        ref[id] = Ref{Ref::kInput, static_cast<int64_t>(prog->inputs_.size())};
        prog->inputs_.push_back(Input{nd.param, -1});
        prog->inputs_.back().bf16 = nd.type == PrimitiveType::kBF16;
        break;
      case NodeOp::kConstant:
        if (static_cast<int64_t>(nd.cf.size()) != total) return nullptr;
        ref[id] = Ref{Ref::kInput, static_cast<int64_t>(prog->inputs_.size())};
        prog->inputs_.push_back(Input{-1, static_cast<int>(id)});
        break;
      case NodeOp::kAffine: {
        if (nd.operands.size() != 1) return nullptr;
        if (nd.op_dims.empty()) {  // scalar broadcast
          ref[id] = operand(0);
          break;
        }
        // Index map of a parameter or constant (through reshapes): gathered per sub-block.
        int src = nd.operands[0];
        while (src >= 0 && src < count && nodes[src].op == NodeOp::kIdentity && nodes[src].operands.size() == 1) {
          src = nodes[src].operands[0];
        }
        if (src < 0 || src >= count || nd.map_dims.empty() || nd.map_dims.size() > 16) return nullptr;
        const FusedNode& sn = nodes[src];
        if (sn.kind != VKind::kF32 || (sn.type != PrimitiveType::kF32 && sn.type != PrimitiveType::kBF16)) {
          return nullptr;
        }
        if (sn.op == NodeOp::kParam) {
          prog->inputs_.push_back(Input{sn.param, -1, static_cast<int>(id)});
          prog->inputs_.back().bf16 = sn.type == PrimitiveType::kBF16;
        } else if (sn.op == NodeOp::kConstant && static_cast<int64_t>(sn.cf.size()) == Elements(sn.dims)) {
          prog->inputs_.push_back(Input{-1, src, static_cast<int>(id)});
        } else if (Elements(sn.dims) <= kMaxComputedSource) {
          prog->inputs_.push_back(Input{-1, src, static_cast<int>(id), true});
        } else {
          return nullptr;
        }
        ref[id] = Ref{Ref::kInput, static_cast<int64_t>(prog->inputs_.size()) - 1};
        break;
      }
      case NodeOp::kIdentity:
        if (nd.operands.size() != 1) return nullptr;
        ref[id] = operand(0);
        break;
      case NodeOp::kConvert: {  // between f32 and bf16: a rounding when it narrows
        if (nd.operands.size() != 1) return nullptr;
        const PrimitiveType from = nodes[nd.operands[0]].type;
        if (from != PrimitiveType::kF32 && from != PrimitiveType::kBF16) return nullptr;
        ref[id] = operand(0);
        if (nd.type == PrimitiveType::kBF16 && from == PrimitiveType::kF32) round_bf16(id);
        break;
      }
      case NodeOp::kUnary:
        if (nd.opcode == Opcode::kCopy && nd.operands.size() == 1) {
          ref[id] = operand(0);
          break;
        }
        if (nd.operands.size() != 1 || !UnaryCode(nd.opcode, &code)) return nullptr;
        ref[id] = Ref{Ref::kValue, static_cast<int64_t>(pending.size())};
        pending.push_back(Pending{code, operand(0), operand(0)});
        if (nd.type == PrimitiveType::kBF16) round_bf16(id);
        break;
      case NodeOp::kBinary:
        if (nd.operands.size() != 2 || !BinaryCode(nd.opcode, &code)) return nullptr;
        ref[id] = Ref{Ref::kValue, static_cast<int64_t>(pending.size())};
        pending.push_back(Pending{code, operand(0), operand(1)});
        if (nd.type == PrimitiveType::kBF16) round_bf16(id);
        break;
      default:
        return nullptr;
    }
  }
  // Temporaries: one per scalar (filled once), then op results reusing a temporary after
  // its value's last use (outputs live to the end of the sub-block).
  const int64_t nvals = static_cast<int64_t>(pending.size());
  constexpr int64_t kForever = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> last_use(nvals, -1);
  for (int64_t i = 0; i < nvals; ++i) {
    for (const Ref& r : {pending[i].a, pending[i].b}) {
      if (r.kind == Ref::kValue) last_use[r.index] = i;
    }
  }
  // An op whose value no other op reads and only one output takes stores straight into that
  // output (in whole sub-blocks).
  std::vector<int64_t> direct(nvals, -2);  // -2: no output yet, -1: several, else the output
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Ref& r = ref[outputs[k]];
    if (r.kind != Ref::kValue) continue;
    direct[r.index] = last_use[r.index] == -1 && direct[r.index] == -2 ? static_cast<int64_t>(k) : -1;
    last_use[r.index] = kForever;
  }
  int64_t temps = static_cast<int64_t>(prog->scalar_nodes_.size());
  for (int64_t s = 0; s < temps; ++s) prog->scalar_temps_.push_back(s);
  std::vector<int64_t> value_temp(nvals, -1), free_temps;
  auto slot = [&](const Ref& r) {
    switch (r.kind) {
      case Ref::kInput: return Slot{true, r.index};
      case Ref::kScalar: return Slot{false, prog->scalar_temps_[r.index]};
      default: return Slot{false, value_temp[r.index]};
    }
  };
  for (int64_t i = 0; i < nvals; ++i) {
    Op op;
    op.code = pending[i].code;
    op.a = slot(pending[i].a);
    op.b = slot(pending[i].b);
    // Operands whose last use is this op free their temporaries first (ops are elementwise:
    // writing a register's lanes where it was read is safe).
    for (const Ref& r : {pending[i].a, pending[i].b}) {
      if (r.kind == Ref::kValue && last_use[r.index] == i && value_temp[r.index] >= 0) {
        free_temps.push_back(value_temp[r.index]);
        value_temp[r.index] = -2 - value_temp[r.index];  // freed (kept distinct from -1)
      }
    }
    if (free_temps.empty()) {
      op.dst = temps++;
    } else {
      op.dst = free_temps.back();
      free_temps.pop_back();
    }
    value_temp[i] = op.dst;
    prog->ops_.push_back(op);
  }
  for (int o : outputs) {
    prog->output_slots_.push_back(slot(ref[o]));
    prog->out_bf16_.push_back(nodes[o].type == PrimitiveType::kBF16);
  }
  prog->direct_.assign(outputs.size(), 0);
  for (int64_t i = 0; i < nvals; ++i) {
    if (direct[i] < 0 || prog->out_bf16_[direct[i]]) continue;
    prog->ops_[i].out = direct[i];
    prog->direct_[direct[i]] = 1;
  }
  prog->temps_ = temps;
  return prog;
#endif
}

bool VectorProgram::Run(const std::vector<FusedNode>& nodes, const std::vector<const Buffer*>& params,
                        std::vector<BufferPtr>& out, ThreadPool* pool,
                        const FusedRunOptions& options) const {
#if !defined(__AVX512F__)
  (void)nodes, (void)params, (void)out, (void)pool, (void)options;
  return false;
#else
  if (out.size() != output_slots_.size() || out.empty()) return false;
  const int64_t total = out[0]->element_count();
  for (size_t k = 0; k < out.size(); ++k) {
    const PrimitiveType t = out_bf16_[k] ? PrimitiveType::kBF16 : PrimitiveType::kF32;
    if (out[k]->shape().element_type() != t || out[k]->element_count() != total) return false;
  }
  std::vector<const float*> base;
  int64_t streamed = 0;  // inputs read at the output's own indices
  // Computed operands of index maps, evaluated whole by the block evaluator.
  std::vector<std::vector<float>> computed(inputs_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (!inputs_[i].computed) continue;
    const int64_t cnt = Elements(nodes[inputs_[i].node].dims);
    BlockEval ev(nodes, params, t_arena);
    ev.NewBlock();
    IndexSet all{cnt, 0, nullptr, ev.NewSetId()};
    const float* v = static_cast<const float*>(ev.Eval(inputs_[i].node, all));
    computed[i].assign(v, v + cnt);
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Input& in = inputs_[i];
    streamed += in.affine < 0;
    if (in.computed) {
      base.push_back(computed[i].data());
      continue;
    }
    if (in.param < 0) {
      base.push_back(nodes[in.node].cf.data());
      continue;
    }
    if (in.param >= static_cast<int64_t>(params.size())) return false;
    const Buffer* b = params[in.param];
    // An index map reads its source at the source's own shape.
    const int64_t want = in.affine < 0 ? total : Elements(nodes[nodes[in.affine].operands[0]].dims);
    const PrimitiveType t = in.bf16 ? PrimitiveType::kBF16 : PrimitiveType::kF32;
    if (b == nullptr || b->shape().element_type() != t || b->element_count() != want) return false;
    // bf16 sources are held as their bits (base16); base keeps the pointer for prefetching.
    base.push_back(reinterpret_cast<const float*>(b->data()));
  }
  std::vector<float> scalars;
  if (!scalar_nodes_.empty()) {
    BlockEval ev(nodes, params, t_arena);
    ev.NewBlock();
    IndexSet one{1, 0, nullptr, ev.NewSetId()};
    for (int id : scalar_nodes_) scalars.push_back(*static_cast<const float*>(ev.Eval(id, one)));
  }
  const int64_t streams = streamed + static_cast<int64_t>(out.size());
  const bool big = streams * total * 4 >= kStreamStoreBytes;
  constexpr int64_t S = kSubBlock;
  const int64_t nsub = (total + S - 1) / S;
  const int64_t ninputs = static_cast<int64_t>(base.size());
  auto body = [&](int64_t s0, int64_t s1) {
    Arena& arena = t_arena;
    arena.Reset();
    // Temporaries, then one staging copy per input for a partial last sub-block.
    float* temps = static_cast<float*>(arena.Alloc((temps_ + ninputs) * kTempStride * 4));
    float* staging = temps + temps_ * kTempStride;
    for (size_t k = 0; k < scalars.size(); ++k) {
      std::fill_n(temps + scalar_temps_[k] * kTempStride, S, scalars[k]);
    }
    std::vector<const float*> in(ninputs);
    std::vector<GatherState> gather(ninputs);
    auto ptr = [&](const Slot& sl) -> const float* {
      return sl.input ? in[sl.index] : temps + sl.index * kTempStride;
    };
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t start = s * S, n = std::min(S, total - start);
      // Prefetch lines of this sub-block's share, spread over its ops (a burst of prefetches
      // would wait for fill buffers and hold up the math behind it).
      int64_t pf_lines = 0, pf_next = 0;
      if (big && start + kPrefetchAhead < total) {
        pf_lines = (std::min(S, total - start - kPrefetchAhead) * 4 + 63) / 64;
      }
      auto prefetch = [&](int64_t upto) {  // issues lines [pf_next, upto) of every input
        for (; pf_next < upto && pf_next < pf_lines; ++pf_next) {
          for (int64_t i = 0; i < ninputs; ++i) {
            if (inputs_[i].affine >= 0) continue;
            const int64_t esize = inputs_[i].bf16 ? 2 : 4;
            _mm_prefetch(reinterpret_cast<const char*>(base[i]) + (start + kPrefetchAhead) * esize + 64 * pf_next,
                         _MM_HINT_T0);
          }
        }
      };
      for (int64_t i = 0; i < ninputs; ++i) {
        if (inputs_[i].bf16) {  // widened into the staging copy
          float* st = staging + i * kTempStride;
          const uint16_t* src = reinterpret_cast<const uint16_t*>(base[i]);
          if (inputs_[i].affine >= 0) {
            GatherAffine(nodes[inputs_[i].affine], src, start, n, st, &gather[i]);
          } else {
            fused::Bf16ToF32(src + start, st, n);
          }
          if (n < S) std::fill(st + n, st + S, 0.0f);
          in[i] = st;
          continue;
        }
        if (inputs_[i].affine >= 0) {
          float* st = staging + i * kTempStride;
          GatherAffine(nodes[inputs_[i].affine], base[i], start, n, st, &gather[i]);
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
      const int64_t nv = (n + 15) / 16;
      const bool whole = n == S;
      const int64_t nops = static_cast<int64_t>(ops_.size());
      int64_t opi = 0;
      for (const Op& op : ops_) {
        prefetch((++opi * pf_lines + nops - 1) / std::max<int64_t>(1, nops));
        if (whole && op.out >= 0) {  // straight into the output
          float* dst = out[op.out]->as<float>() + start;
          const bool aligned = (reinterpret_cast<uintptr_t>(dst) & 63) == 0;
          RunOp(op.code, ptr(op.a), ptr(op.b), dst, nv, big && aligned ? kStream : kOut);
          continue;
        }
        RunOp(op.code, ptr(op.a), ptr(op.b), temps + op.dst * kTempStride, nv, kTemp);
      }
      for (size_t k = 0; k < out.size(); ++k) {
        if (whole && direct_[k]) continue;
        if (out_bf16_[k]) {
          fused::F32ToBf16(ptr(output_slots_[k]), out[k]->as<uint16_t>() + start, n);
          continue;
        }
        StoreOut(out[k]->as<float>() + start, ptr(output_slots_[k]), n, big);
      }
    }
    if (big) StreamFence();
  };
  if (pool == nullptr || options.threads == 1 || pool->threads() == 1) {
    body(0, nsub);
  } else {
    pool->ParallelFor(nsub, kParallelGrain, body);
  }
  return true;
#endif
}

}  // namespace hlox::rt
