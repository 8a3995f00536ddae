// The streaming path of the fused block loop (runtime/fused_stream.*): passes big enough to
// prefetch their inputs and write non-temporal stores (over 24 MiB streamed), and the automatic
// L1-sized block, checked against a plain reference loop written here, for 1 and 2 threads
// (identical bits) and against an explicit block size. Also the pieces on their own:
// StreamedParams picks exactly the parameters read at the output's indices, StreamStoreF32
// copies any alignment and length, BlockPrefetcher tolerates clipped and empty ranges,
// ParallelPieces covers every index once in pieces independent of the thread count.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/core/thread_pool.h"
#include "runtime/core/value.h"
#include "runtime/fused/node.h"
#include "runtime/fused/program.h"
#include "runtime/fused/stream.h"

namespace hlox::rt {
namespace {

Value F32(int64_t n, uint32_t seed) {
  auto b = std::make_shared<Buffer>(Shape(PrimitiveType::kF32, {n}));
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    b->as<float>()[i] = -2.0f + 4.0f * static_cast<float>(s >> 8) / 16777216.0f;
  }
  return Value::Array(b);
}

std::string ChainText(int64_t n) {
  constexpr char kText[] = R"(HloModule m
fused {
  x = f32$S parameter(0)
  y = f32$S parameter(1)
  z = f32$S parameter(2)
  two = f32[] constant(2)
  b2 = f32$S broadcast(two), dimensions={}
  m = f32$S multiply(b2, x)
  t = f32$S tanh(m)
  ty = f32$S multiply(t, y)
  e = f32$S exponential(ty)
  r = f32$S subtract(e, z)
  ROOT o = (f32$S, f32$S) tuple(r, m)
}
ENTRY main {
  a = f32$S parameter(0)
  b = f32$S parameter(1)
  c = f32$S parameter(2)
  ROOT f = (f32$S, f32$S) fusion(a, b, c), kind=kLoop, calls=fused
}
)";
  return absl::StrReplaceAll(kText, {{"$S", absl::StrCat("[", n, "]")}});
}

TEST(FusedStream, BigChainMatchesReferenceAndThreads) {
  const int64_t n = (int64_t{3} << 20) + 77;  // 4 x 12 MiB streamed, a ragged tail
  auto m = ParseModule(ChainText(n));
  ASSERT_TRUE(m.ok()) << m.status();
  auto prog = FusedProgram::Compile(*(*m)->FindComputation("fused"), 1);
  ASSERT_TRUE(prog.ok()) << prog.status();
  Value x = F32(n, 1), y = F32(n, 2), z = F32(n, 3);
  std::vector<const Value*> args = {&x, &y, &z};
  FusedRunOptions opt;  // auto block
  auto one = (*prog)->Run(args, nullptr, opt);
  ASSERT_TRUE(one.ok()) << one.status();
  ThreadPool pool(2);
  auto two = (*prog)->Run(args, &pool, opt);
  ASSERT_TRUE(two.ok()) << two.status();
  FusedRunOptions fixed;
  fixed.block = 4096;
  fixed.auto_block = false;
  auto big_block = (*prog)->Run(args, &pool, fixed);
  ASSERT_TRUE(big_block.ok()) << big_block.status();
  ASSERT_TRUE(one->is_tuple);
  for (int k = 0; k < 2; ++k) {
    const Buffer& a = *one->tuple[k].array;
    EXPECT_EQ(0, std::memcmp(a.data(), two->tuple[k].array->data(), a.byte_size())) << k;
  }
  const float* px = x.array->as<float>();
  const float* py = y.array->as<float>();
  const float* pz = z.array->as<float>();
  const float* r = one->tuple[0].array->as<float>();
  const float* mm = one->tuple[1].array->as<float>();
  const float* r4 = big_block->tuple[0].array->as<float>();
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    double ref = std::exp(std::tanh(2.0 * px[i]) * py[i]) - pz[i];
    if (std::fabs(r[i] - ref) > 1e-5 * std::fabs(ref) + 1e-5) ++bad;
    if (std::fabs(r4[i] - ref) > 1e-5 * std::fabs(ref) + 1e-5) ++bad;
    if (mm[i] != 2.0f * px[i]) ++bad;
  }
  EXPECT_EQ(bad, 0);
}

TEST(FusedStream, StreamedParamsFollowsElementwiseOnly) {
  auto m = ParseModule(R"(HloModule m
fused {
  x = f32[4,8] parameter(0)
  y = f32[8,4] parameter(1)
  s = f32[] parameter(2)
  w = f32[32] parameter(3)
  yt = f32[4,8] transpose(y), dimensions={1,0}
  sb = f32[4,8] broadcast(s), dimensions={}
  wr = f32[4,8] reshape(w)
  a = f32[4,8] add(x, yt)
  b = f32[4,8] multiply(a, sb)
  ROOT c = f32[4,8] subtract(b, wr)
}
ENTRY main {
  x = f32[4,8] parameter(0)
  y = f32[8,4] parameter(1)
  s = f32[] parameter(2)
  w = f32[32] parameter(3)
  ROOT f = f32[4,8] fusion(x, y, s, w), kind=kLoop, calls=fused
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  const Computation* comp = (*m)->FindComputation("fused");
  // Build the nodes the way the compiler does, through a compiled program's public result:
  // x and w (via reshape) are read at the output's indices; y (transposed) and s are not.
  auto prog = FusedProgram::Compile(*comp, 1);
  ASSERT_TRUE(prog.ok()) << prog.status();
  std::vector<FusedNode> nodes;
  for (const Instruction* instr : comp->PostOrder()) {
    FusedNode nd;
    nd.instr = instr;
    nd.dims = instr->shape().dims();
    switch (instr->opcode()) {
      case Opcode::kParameter: nd.op = NodeOp::kParam; nd.param = instr->parameter_number(); break;
      case Opcode::kTranspose: case Opcode::kBroadcast: nd.op = NodeOp::kAffine; break;
      case Opcode::kReshape: nd.op = NodeOp::kIdentity; break;
      default: nd.op = NodeOp::kBinary; break;
    }
    for (const Instruction* op : instr->operands()) {
      for (size_t k = 0; k < nodes.size(); ++k) {
        if (nodes[k].instr == op) nd.operands.push_back(static_cast<int>(k));
      }
    }
    nodes.push_back(nd);
  }
  std::vector<int64_t> got = StreamedParams(nodes, {static_cast<int>(nodes.size()) - 1});
  EXPECT_EQ(got, (std::vector<int64_t>{0, 3}));
}

TEST(FusedStream, StreamStoreAnyAlignment) {
  std::vector<float> src(300), dst(310);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.5f - 7;
  for (int off = 0; off < 9; ++off) {
    for (int64_t len : {0, 1, 15, 16, 17, 100, 291}) {
      std::fill(dst.begin(), dst.end(), -1.0f);
      StreamStoreF32(dst.data() + off, src.data(), len);
      StreamFence();
      for (int64_t i = 0; i < static_cast<int64_t>(dst.size()); ++i) {
        float want = (i >= off && i < off + len) ? src[i - off] : -1.0f;
        ASSERT_EQ(dst[i], want) << "off " << off << " len " << len << " i " << i;
      }
    }
  }
}

TEST(FusedStream, PrefetcherClipsRanges) {
  Value a = F32(1000, 4);
  std::vector<const Buffer*> params = {a.array.get(), nullptr};
  BlockPrefetcher p;
  p.Queue(params, {0, 1, 5}, 900, 4096, 3);  // past the end, null and out-of-range params
  for (int i = 0; i < 10; ++i) p.Step();
  p.Queue(params, {0}, 5000, 10, 1);  // entirely past the end
  p.Flush();
  p.Queue(params, {}, 0, 10, 0);
  p.Step();
  SUCCEED();
}

// ParallelPieces covers [0, n) exactly once, in pieces whose bounds depend only on n and the
// least piece (not on the thread count), and runs inline without a pool.
TEST(FusedStream, ParallelPiecesCoverEachIndexOnce) {
  for (int64_t n : {int64_t{1}, int64_t{63}, int64_t{1000}, int64_t{65536} + 5}) {
    std::vector<std::pair<int64_t, int64_t>> bounds[3];
    std::vector<int> hits(n, 0);
    int k = 0;
    for (int threads : {0, 2, 3}) {
      std::unique_ptr<ThreadPool> pool = threads > 0 ? std::make_unique<ThreadPool>(threads) : nullptr;
      std::mutex mu;
      ParallelPieces(pool.get(), n, 4, [&](int64_t lo, int64_t hi) {
        std::lock_guard<std::mutex> lock(mu);
        bounds[k].push_back({lo, hi});
        for (int64_t i = lo; i < hi; ++i) ++hits[i];
      });
      std::sort(bounds[k].begin(), bounds[k].end());
      ++k;
    }
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i], 3) << n << " " << i;
    EXPECT_EQ(bounds[1], bounds[2]) << n;  // same pieces at 2 and 3 threads
    EXPECT_EQ(bounds[0].size(), 1u);       // no pool: one call
    if (n >= 1000) {
      EXPECT_GT(bounds[1].size(), 8u) << n;  // finer than one chunk per quarter thread
    }
  }
}

}  // namespace
}  // namespace hlox::rt
