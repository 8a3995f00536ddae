// FusedProgram::Run: the fused loop nest. Elementwise outputs of equal dimensions are computed
// together block by block (one pass over the output index space, intermediates in a
// per-thread arena); each reduce output is computed per block of outputs, either over
// contiguous rows (reduced dims minor-most) or by walking the reduced positions for a whole
// block of outputs at once. Blocks go to the pool; the split depends only on the sizes, so
// results do not depend on the thread count. Elementwise passes use an L1-sized block when
// options allow, and passes over arrays beyond the caches stream (fused/stream.h).
// GCC 12 reports false maybe-uninitialized warnings inside the AVX-512 conversion intrinsics.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "runtime/core/kernel_util.h"
#include "runtime/fused/program_impl.h"
#include "runtime/fused/stream.h"
#include "runtime/math/block_ops.h"
#include "runtime/math/half.h"

namespace hlox::rt {
thread_local Arena t_arena;

// Blocks from which ParallelBlocks hands out pieces (fused/stream.h ParallelPieces: at least 4
// blocks each) rather than one fixed chunk per quarter thread.
constexpr int64_t kPiecedBlocks = 4 * kStreamPieces;

// Stores n values of kind k into buffer b at element offset `start`, converting to its type.
void StoreBlock(Buffer& b, int64_t start, const void* src, VKind k, int64_t n) {
  if (k == VKind::kF32 && b.shape().element_type() == PrimitiveType::kF16) {  // vector narrowing
    fused::F32ToHalf(fused::kHalfF16, static_cast<const float*>(src), b.as<uint16_t>() + start, n);
    return;
  }
  auto store = [&](auto tag) {
    using S = decltype(tag);
    const S* x = static_cast<const S*>(src);
    auto put = [&](auto* dst, auto conv) {
      dst += start;
      for (int64_t j = 0; j < n; ++j) dst[j] = conv(x[j]);
    };
    switch (b.shape().element_type()) {
      case PrimitiveType::kF32: put(b.as<float>(), [](S v) { return static_cast<float>(v); }); break;
      case PrimitiveType::kF64: put(b.as<double>(), [](S v) { return static_cast<double>(v); }); break;
      case PrimitiveType::kBF16: put(b.as<uint16_t>(), [](S v) { return fused::FloatToBf16Bits(static_cast<float>(v)); }); break;
      case PrimitiveType::kF16: put(b.as<uint16_t>(), [](S v) { return FloatToHalf(static_cast<float>(v)); }); break;
      case PrimitiveType::kPred: put(b.as<uint8_t>(), [](S v) { return static_cast<uint8_t>(v != 0); }); break;
      case PrimitiveType::kS8: put(b.as<int8_t>(), [](S v) { return static_cast<int8_t>(v); }); break;
      case PrimitiveType::kU8: put(b.as<uint8_t>(), [](S v) { return static_cast<uint8_t>(v); }); break;
      case PrimitiveType::kS16: put(b.as<int16_t>(), [](S v) { return static_cast<int16_t>(v); }); break;
      case PrimitiveType::kU16: put(b.as<uint16_t>(), [](S v) { return static_cast<uint16_t>(v); }); break;
      case PrimitiveType::kS32: put(b.as<int32_t>(), [](S v) { return static_cast<int32_t>(v); }); break;
      case PrimitiveType::kU32: put(b.as<uint32_t>(), [](S v) { return static_cast<uint32_t>(v); }); break;
      case PrimitiveType::kS64: put(b.as<int64_t>(), [](S v) { return static_cast<int64_t>(v); }); break;
      default: break;
    }
  };
  if (k == VKind::kF32) store(float{});
  else if (k == VKind::kF64) store(double{});
  else store(int64_t{});
}

void ParallelBlocks(ThreadPool* pool, const FusedRunOptions& opt, int64_t nblocks,
                    const std::function<void(int64_t, int64_t)>& fn) {
  if (pool == nullptr || opt.threads == 1 || pool->threads() == 1 || nblocks < 2) {
    fn(0, nblocks);
  } else if (nblocks >= kPiecedBlocks) {
    ParallelPieces(pool, nblocks, 1, fn);  // claimed piece by piece: no tail behind a late thread
  } else {
    pool->ParallelFor(nblocks, 1, fn);
  }
}

int64_t ElementwiseBlock(int64_t block_bytes_per_elem, const FusedRunOptions& options) {
  int64_t block = std::max<int64_t>(16, options.block);
  if (!options.auto_block || block_bytes_per_elem <= 0) return block;
  while (block > kMinElementwiseBlock && block * block_bytes_per_elem > kElementwiseBlockBytes) {
    block /= 2;
  }
  return block;
}

namespace {

// The fields of FusedProgram::Impl an elementwise pass reads.
struct PassInput {
  const std::vector<FusedNode>& nodes;
  const std::vector<int>& outputs;
  const std::vector<int64_t>& streamed;
  int64_t work_nodes;
  int64_t block_bytes_per_elem;
};

// One pass over the index space of outputs `ks` (all of equal dims): block by block, each
// output's block evaluated and stored. Big passes prefetch their streamed inputs a block
// ahead and write f32 outputs with non-temporal stores.
void RunElementwisePass(const PassInput& im, const std::vector<const Buffer*>& params,
                        const std::vector<size_t>& ks, std::vector<BufferPtr>& out,
                        ThreadPool* pool, const FusedRunOptions& options) {
  const int64_t block = ElementwiseBlock(im.block_bytes_per_elem, options);
  const int64_t total = out[ks[0]]->element_count();
  const int64_t nblocks = (total + block - 1) / block;
  std::vector<int64_t> streamed;
  int64_t stream_bytes = 0;
  for (int64_t p : im.streamed) {
    if (p < 0 || p >= static_cast<int64_t>(params.size()) || params[p]->element_count() != total) continue;
    streamed.push_back(p);
    stream_bytes += params[p]->byte_size();
  }
  for (size_t k : ks) stream_bytes += out[k]->byte_size();
  const bool big = stream_bytes >= kStreamStoreBytes;
  const bool prefetch = big && !streamed.empty() && im.work_nodes > 0;
  const int64_t steps = im.work_nodes * ((block + BlockEval::kWorkChunk - 1) / BlockEval::kWorkChunk);
  ParallelBlocks(pool, options, nblocks, [&](int64_t b0, int64_t b1) {
    BlockEval ev(im.nodes, params, t_arena);
    BlockPrefetcher prefetcher;
    if (prefetch) ev.set_prefetcher(&prefetcher);
    for (int64_t b = b0; b < b1; ++b) {
      ev.NewBlock();
      const int64_t start = b * block, n = std::min(block, total - start);
      if (prefetch) {
        prefetcher.Flush();
        if (b + 1 < b1) prefetcher.Queue(params, streamed, start + block, block, steps);
      }
      IndexSet set{n, start, nullptr, ev.NewSetId()};
      for (size_t k : ks) {
        const VKind kind = im.nodes[im.outputs[k]].kind;
        const bool f32 = kind == VKind::kF32 && out[k]->shape().element_type() == PrimitiveType::kF32;
        float* dst = f32 ? out[k]->as<float>() + start : nullptr;
        // Small passes let the output node write its block in place (no copy); big ones
        // compute in the arena and stream the block out.
        if (f32 && !big) ev.set_destination(im.outputs[k], set.id, dst);
        const void* v = ev.Eval(im.outputs[k], set);
        ev.set_destination(-1, 0, nullptr);
        if (v == dst) continue;
        if (big && f32) {
          StreamStoreF32(dst, static_cast<const float*>(v), n);
        } else {
          StoreBlock(*out[k], start, v, kind, n);
        }
      }
    }
    if (big) StreamFence();
  });
}

}  // namespace

bool FusedProgram::has_range_eval() const {
  const Impl& im = *impl_;
  return !im.tuple_root && im.outputs.size() == 1 && im.nodes[im.outputs[0]].op != NodeOp::kReduce;
}

namespace {

// BindRows on the block loop.
class BlockRows : public FusedProgram::Rows {
 public:
  BlockRows(const std::vector<FusedNode>& nodes, int node, int64_t block_bytes_per_elem,
            const std::vector<const Buffer*>& params, Buffer& out)
      : nodes_(nodes), node_(node), block_bytes_per_elem_(block_bytes_per_elem), params_(params), out_(out) {}
  void Run(int64_t first, int64_t rows, int64_t stride, int64_t len) const override {
    const int node = node_;
    const VKind kind = nodes_[node].kind;
    const bool f32 = kind == VKind::kF32 && out_.shape().element_type() == PrimitiveType::kF32;
    const int64_t block = ElementwiseBlock(block_bytes_per_elem_, FusedRunOptions{});
    BlockEval ev(nodes_, params_, t_arena);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t end = first + r * stride + len;
      for (int64_t start = first + r * stride; start < end; start += block) {
        ev.NewBlock();
        const int64_t n = std::min(block, end - start);
        IndexSet set{n, start, nullptr, ev.NewSetId()};
        float* dst = f32 ? out_.as<float>() + start : nullptr;
        if (f32) ev.set_destination(node, set.id, dst);
        const void* v = ev.Eval(node, set);
        ev.set_destination(-1, 0, nullptr);
        if (v != dst) StoreBlock(out_, start, v, kind, n);
      }
    }
  }
  bool registers() const override { return false; }

 private:
  const std::vector<FusedNode>& nodes_;
  const int node_;
  const int64_t block_bytes_per_elem_;
  const std::vector<const Buffer*> params_;
  Buffer& out_;
};

// BindRows on the register path.
class VectorRows : public FusedProgram::Rows {
 public:
  VectorRows(const std::vector<FusedNode>& nodes, const VectorProgram& vec) : nodes_(nodes), vec_(vec) {}
  VectorProgram::Bound bound;
  void Run(int64_t first, int64_t rows, int64_t stride, int64_t len) const override {
    if (stride == len || rows == 1) {
      vec_.RunRange(nodes_, bound, first, 1, 0, (rows - 1) * stride + len);
      return;
    }
    vec_.RunRange(nodes_, bound, first, rows, stride, len);
  }
  bool registers() const override { return true; }

 private:
  const std::vector<FusedNode>& nodes_;
  const VectorProgram& vec_;
};

}  // namespace

std::unique_ptr<FusedProgram::Rows> FusedProgram::BindRows(const std::vector<const Buffer*>& params,
                                                           Buffer& out) const {
  const Impl& im = *impl_;
  bool tiled = false;
  for (int64_t d : im.tile_dim) tiled |= d >= 0;
  // The register path evaluates its scalars when bound; an output of one element could be a
  // scalar read from `out` itself before anything is written there, so it takes the block loop.
  if (im.vec != nullptr && !tiled && out.element_count() > 1) {
    auto v = std::make_unique<VectorRows>(im.nodes, *im.vec);
    if (im.vec->BindRange(im.nodes, params, out, &v->bound)) return v;
  }
  return std::make_unique<BlockRows>(im.nodes, im.outputs[0], im.block_bytes_per_elem, params, out);
}

absl::StatusOr<Value> FusedProgram::Run(const std::vector<const Value*>& operands, ThreadPool* pool,
                                        const FusedRunOptions& options) const {
  const Impl& im = *impl_;
  if (static_cast<int64_t>(operands.size()) != im.param_count) {
    return absl::InvalidArgumentError(absl::StrCat("fused loop: expected ", im.param_count,
                                                   " operands, got ", operands.size()));
  }
  std::vector<const Buffer*> params;
  for (const Value* v : operands) {
    if (v == nullptr || !v->is_array()) return absl::InvalidArgumentError("fused loop: non-array operand");
    params.push_back(v->array.get());
  }
  const size_t nout = im.outputs.size();
  std::vector<BufferPtr> out(nout);
  for (size_t k = 0; k < nout; ++k) {
    const Shape& s = im.tuple_root ? im.result_shape.tuple_shape(k) : im.result_shape;
    out[k] = NewOutputBuffer(s);  // may take a donated operand buffer (core/value.h)
  }
  auto result = [&]() -> Value {
    if (!im.tuple_root) return Value::Array(out[0]);
    std::vector<Value> elems;
    for (auto& b : out) elems.push_back(Value::Array(b));
    return Value::Tuple(std::move(elems));
  };
  // Pure f32 elementwise programs: the register path (it declines operands it does not fit).
  // Its index maps gather row by row, so programs with a transposing output walk tiles instead.
  bool tiled = false;
  for (int64_t d : im.tile_dim) tiled |= options.tiled && d >= 0;
  if (options.vector_path && !tiled && im.vec != nullptr &&
      im.vec->Run(im.nodes, params, out, pool, options)) {
    return result();
  }
  // Elementwise outputs sharing the first one's dims run in one pass.
  std::vector<size_t> group, others;
  for (size_t k = 0; k < nout; ++k) {
    const FusedNode& nd = im.nodes[im.outputs[k]];
    if (options.tiled && im.tile_dim[k] >= 0) {  // a transposing output: its own tiled walk
      RunTiledPass(im.nodes, im.outputs[k], im.tile_dim[k], params, pool, options, *out[k]);
      continue;
    }
    bool joins = nd.op != NodeOp::kReduce &&
                 (group.empty() || im.nodes[im.outputs[group[0]]].dims == nd.dims);
    (joins ? group : others).push_back(k);
  }
  const PassInput pass{im.nodes, im.outputs, im.streamed, im.work_nodes, im.block_bytes_per_elem};
  if (!group.empty()) RunElementwisePass(pass, params, group, out, pool, options);
  for (size_t k : others) {
    const FusedNode& nd = im.nodes[im.outputs[k]];
    if (nd.op != NodeOp::kReduce) {  // elementwise output of other dims: its own pass
      RunElementwisePass(pass, params, {k}, out, pool, options);
      continue;
    }
    RunFusedReduce(im.nodes, nd, params, pool, options, *out[k]);
  }
  return result();
}

}  // namespace hlox::rt
