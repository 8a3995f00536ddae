// Tiled walks of transposing fusion outputs. A fusion whose index map moves the minor dim
// (a transpose, possibly behind reshapes, slices and broadcasts) reads its parameters at a
// large step when its output is walked row by row: every element of an output row touches a
// different cache line. TileDims finds, per output, the dim along which the parameters are
// read at unit (or zero) step; RunTiledPass then walks the output in tiles of up to 64 x 64
// (that dim x the minor dim; the codegen decision's hlox_tile key sets another edge or walks
// rows instead, FusedRunOptions), evaluates each tile as runs along that dim (arithmetic runs that
// the index maps turn into contiguous operand ranges, fused/affine.cc), and stores the tile
// transposed, so both the reads and the writes stay within a tile's cache lines. Each element
// is computed by the same ops as in a row-order walk, so results are bit-identical, and the
// tiles depend only on the shape, so they do not depend on the thread count. Big f32 outputs
// are written with non-temporal stores; the evaluator prefetches each tile's successor's rows
// (fused/affine.cc, fused/compute.cc), which are too short for the hardware prefetcher.
#include <algorithm>
#include <climits>
#include <cstdlib>

#include "runtime/fused/program_impl.h"
#include "runtime/fused/stream.h"
#include "runtime/fused/walk.h"

namespace hlox::rt {
namespace {

constexpr int64_t kMinTileDim = 8;    // shorter dims gain nothing from a tiled walk
constexpr int64_t kMinElements = 2048;
constexpr int64_t kBadStep = INT64_MIN;
constexpr int kMaxVisits = 4096;  // bound on the analysis walk of shared subexpressions

// The last dim of size > 1 (its row-major stride is 1), or -1.
int64_t MinorDim(const std::vector<int64_t>& dims) {
  for (size_t d = dims.size(); d-- > 0;) {
    if (dims[d] > 1) return static_cast<int64_t>(d);
  }
  return -1;
}

// Appends to `steps` the step at which each parameter below `node` is read when `node`'s
// linear index steps by `delta` (kBadStep where an index map does not step along one dim).
void LeafSteps(const std::vector<FusedNode>& nodes, int node, int64_t delta,
               std::vector<int64_t>* steps, int* visits) {
  if (++*visits > kMaxVisits) return;
  const FusedNode& nd = nodes[node];
  switch (nd.op) {
    case NodeOp::kParam:
      steps->push_back(delta);
      return;
    case NodeOp::kUnary: case NodeOp::kBinary: case NodeOp::kSelect: case NodeOp::kClamp:
    case NodeOp::kCompare: case NodeOp::kConvert: case NodeOp::kBitcastConvert:
      for (int op : nd.operands) {
        if (!nodes[op].dims.empty()) LeafSteps(nodes, op, delta, steps, visits);
      }
      return;
    case NodeOp::kIdentity:
      LeafSteps(nodes, nd.operands[0], delta, steps, visits);
      return;
    case NodeOp::kAffine: case NodeOp::kDynamicSlice: {
      if (nd.op_dims.empty() || nd.map_dims.empty()) return;  // scalar broadcast
      if (delta == 0) {
        LeafSteps(nodes, nd.operands[0], 0, steps, visits);
        return;
      }
      for (size_t k = 0; k < nd.map_dims.size(); ++k) {
        const int64_t st = nd.map_strides[k];
        if (delta % st == 0 && std::abs(delta / st) < nd.map_dims[k]) {
          LeafSteps(nodes, nd.operands[0], delta / st * nd.map_coef[k], steps, visits);
          return;
        }
      }
      steps->push_back(kBadStep);
      return;
    }
    case NodeOp::kConstant: case NodeOp::kIota: case NodeOp::kLayoutBitcast: case NodeOp::kPad:
    case NodeOp::kConcat: case NodeOp::kReduce: case NodeOp::kTuple:
      return;
  }
}

// Parameters below `node` read at a step other than -1, 0 or 1 when its index steps by delta.
int64_t StridedReads(const std::vector<FusedNode>& nodes, int node, int64_t delta) {
  std::vector<int64_t> steps;
  int visits = 0;
  LeafSteps(nodes, node, delta, &steps, &visits);
  if (visits > kMaxVisits) return -1;
  int64_t bad = 0;
  for (int64_t s : steps) bad += s == kBadStep || s > 1 || s < -1;
  return bad;
}

int64_t TileDim(const std::vector<FusedNode>& nodes, int node) {
  const FusedNode& nd = nodes[node];
  if (nd.op == NodeOp::kReduce || nd.dims.size() < 2) return -1;
  int64_t count = 1;
  for (int64_t d : nd.dims) count *= d;
  const int64_t m = MinorDim(nd.dims);
  if (count < kMinElements || m <= 0) return -1;
  const int64_t minor_bad = StridedReads(nodes, node, nd.strides[m]);
  if (minor_bad <= 0) return -1;
  int64_t best = -1, best_bad = minor_bad;
  for (int64_t k = m - 1; k >= 0; --k) {
    if (nd.dims[k] < kMinTileDim) continue;
    const int64_t bad = StridedReads(nodes, node, nd.strides[k]);
    if (bad >= 0 && (bad < best_bad || (best < 0 && bad == best_bad))) {
      best = k;
      best_bad = bad;
    }
  }
  return best;
}

}  // namespace

// True when the set's runs form a tile: run r starts at run_start[0] + r and all have one
// length (a tiled walk, fused/tile.cc, whose runs step down the rows of a parameter).
bool TileRuns(const IndexSet& s) {
  for (int64_t r = 1; r < s.runs; ++r) {
    if (s.run_start[r] != s.run_start[0] + r || s.run_len[r] != s.run_len[0]) return false;
  }
  return true;
}

// o[r * len + k] = src[r + k * step] for r < runs, k < len: the runs' values in run order,
// read a row (k) at a time so every cache line of the source is used while it is in L1 (a
// walk down the columns of a power-of-two row stride keeps hitting one L1 set), prefetching
// each row's continuation (the next tile's part of it: rows of 64 floats are too short for the
// hardware prefetcher, so each would otherwise wait for memory).
void GatherTileF32(const float* src, int64_t step, int64_t runs, int64_t len, float* o) {
  for (int64_t k = 0; k < len; ++k) {
    const float* row = src + k * step;
    // The row's continuation, which the next tile of the walk reads, into L2: every line it
    // touches (a row off line boundaries spans one line more than its length in lines).
    PrefetchLinesL2(row + runs, runs * 4);
    for (int64_t r = 0; r < runs; ++r) o[r * len + k] = row[r];
  }
}

std::vector<int64_t> TileDims(const std::vector<FusedNode>& nodes, const std::vector<int>& outputs) {
  std::vector<int64_t> dims;
  for (int o : outputs) dims.push_back(TileDim(nodes, o));
  return dims;
}

void RunTiledPass(const std::vector<FusedNode>& nodes, int node, int64_t tile_dim,
                  const std::vector<const Buffer*>& params, ThreadPool* pool,
                  const FusedRunOptions& opt, Buffer& out) {
  const FusedNode& nd = nodes[node];
  const int64_t k = tile_dim, m = MinorDim(nd.dims);
  const int64_t a_dim = nd.dims[k], b_dim = nd.dims[m], sk = nd.strides[k];
  // Tiles of opt.tile x opt.tile (64 unless the codegen decision says otherwise), longer along
  // the minor dim when the tile dim is short, up to as many elements.
  const int64_t edge = std::max<int64_t>(opt.tile, 1);
  const int64_t ta = std::min(a_dim, edge);
  const int64_t tb = std::min(b_dim, std::max(edge, edge * edge / ta));
  std::vector<int64_t> outer_dims, outer_strides;
  int64_t outer = 1;
  for (size_t d = 0; d < nd.dims.size(); ++d) {
    if (static_cast<int64_t>(d) == k || static_cast<int64_t>(d) == m || nd.dims[d] == 1) continue;
    outer_dims.push_back(nd.dims[d]);
    outer_strides.push_back(nd.strides[d]);
    outer *= nd.dims[d];
  }
  const int64_t na = (a_dim + ta - 1) / ta, nb = (b_dim + tb - 1) / tb;
  const int64_t tiles = outer * na * nb;
  if (tiles == 0) return;
  const bool f32_out = nd.kind == VKind::kF32 && out.shape().element_type() == PrimitiveType::kF32;
  // Outputs too big to stay cached skip the read-for-ownership with non-temporal stores.
  int64_t streamed_bytes = out.byte_size();
  for (const Buffer* p : params) streamed_bytes += p != nullptr ? p->byte_size() : 0;
  const bool stream = f32_out && streamed_bytes >= kStreamStoreBytes && tb >= 16;
  ParallelBlocks(pool, opt, tiles, [&](int64_t t0, int64_t t1) {
    BlockEval ev(nodes, params, t_arena);
    for (int64_t t = t0; t < t1; ++t) {
      ev.NewBlock();
      const int64_t ib = t % nb, ia = (t / nb) % na;
      int64_t o = t / (nb * na), base = 0;
      for (size_t d = outer_dims.size(); d-- > 0;) {
        base += (o % outer_dims[d]) * outer_strides[d];
        o /= outer_dims[d];
      }
      const int64_t a0 = ia * ta, b0 = ib * tb;
      const int64_t ca = std::min(ta, a_dim - a0), cb = std::min(tb, b_dim - b0), n = ca * cb;
      Arena& ar = ev.arena();
      int64_t* idx = static_cast<int64_t*>(ar.Alloc(8 * (n + 2 * cb) + 8));
      int64_t* rs = idx + n;
      int64_t* rl = rs + cb;
      for (int64_t b = 0; b < cb; ++b) {
        const int64_t start = base + b0 + b + a0 * sk;
        rs[b] = start;
        rl[b] = ca;
        for (int64_t a = 0; a < ca; ++a) idx[b * ca + a] = start + a * sk;
      }
      if (stream) {
        // Rows not on line boundaries start and end in lines the neighbouring tiles share,
        // which the streamed rows write with ordinary stores: fetch them for writing while the
        // tile computes, rather than stall on each when it is stored.
        float* dst = out.as<float>() + base + b0;
        for (int64_t a = 0; a < ca; ++a) {
          float* row = dst + (a0 + a) * sk;
          if ((reinterpret_cast<uintptr_t>(row) & 63) != 0) __builtin_prefetch(row, 1, 3);
          if ((reinterpret_cast<uintptr_t>(row + cb) & 63) != 0) __builtin_prefetch(row + cb - 1, 1, 3);
        }
      }
      IndexSet set{n, idx[0], idx, ev.NewSetId()};
      set.run_start = rs;
      set.run_len = rl;
      set.runs = cb;
      set.run_step = sk;
      const void* v = ev.Eval(node, set);
      // Value (b, a) of the tile lies at v[b * ca + a]; output row a takes the cb values of b.
      if (f32_out) {
        const float* x = static_cast<const float*>(v);
        float* dst = out.as<float>() + base + b0;
        float* line = stream ? static_cast<float*>(ar.Alloc(4 * cb + 64)) : nullptr;
        for (int64_t a = 0; a < ca; ++a) {
          float* row = dst + (a0 + a) * sk;
          if (stream) {  // transposed into a row buffer, then streamed out
            for (int64_t b = 0; b < cb; ++b) line[b] = x[b * ca + a];
            StreamStoreF32(row, line, cb);
            continue;
          }
          for (int64_t b = 0; b < cb; ++b) row[b] = x[b * ca + a];
        }
        continue;
      }
      void* tmp = ar.Alloc(KindBytes(nd.kind) * cb + 8);
      fused_walk::WithKind(nd.kind, [&](auto tag) {
        using T = decltype(tag);
        const T* x = static_cast<const T*>(v);
        T* row = static_cast<T*>(tmp);
        for (int64_t a = 0; a < ca; ++a) {
          for (int64_t b = 0; b < cb; ++b) row[b] = x[b * ca + a];
          StoreBlock(out, base + b0 + (a0 + a) * sk, row, nd.kind, cb);
        }
      });
    }
    if (stream) StreamFence();
  });
}

}  // namespace hlox::rt
