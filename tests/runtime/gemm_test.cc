// Sgemm (runtime/gemm/dot_general.h) against a plain double-precision triple loop: odd and prime shapes,
// k = 0, shapes narrower than one micro-tile, all four transpose combinations, leading
// dimensions larger than the minimum (padding must stay untouched), accumulate on and off,
// shapes that take several k-blocks and column blocks, and identical bits for 1 and 2 threads.
// The codegen knobs of a dot (GemmTuning): blocking, schedule, thread and batch splits keep the
// default's bits; backend_config keys parse, and malformed ones are ignored.
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/core/thread_pool.h"
#include "runtime/gemm/dot_general.h"
#include "runtime/gemm/gemm.h"
#include "runtime/math/half.h"

namespace hlox::rt {
namespace {

constexpr float kSentinel = 12345.0f;

struct GemmCase {
  bool ta, tb;
  int64_t m, n, k;
  int64_t pad = 0;  // extra floats on every leading dimension
  bool accumulate = false;
};

std::string Name(const GemmCase& g) {
  return "ta=" + std::to_string(g.ta) + " tb=" + std::to_string(g.tb) + " m=" + std::to_string(g.m) +
         " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) + " pad=" + std::to_string(g.pad) +
         " acc=" + std::to_string(g.accumulate);
}

// Runs one case with the given pool, checks it against the reference, returns C (with padding).
// The reference runs only for the first call of a case (`check`); the others are compared bitwise.
std::vector<float> RunCase(const GemmCase& g, ThreadPool* pool, uint32_t seed, bool check_ref,
                           const GemmTuning& tuning = {}) {
  int64_t lda = (g.ta ? g.m : g.k) + g.pad, ldb = (g.tb ? g.k : g.n) + g.pad, ldc = g.n + g.pad;
  int64_t arows = g.ta ? g.k : g.m, brows = g.tb ? g.n : g.k;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> a(std::max<int64_t>(1, arows * lda)), b(std::max<int64_t>(1, brows * ldb));
  std::vector<float> c(std::max<int64_t>(1, g.m * ldc), kSentinel);
  for (float& x : a) x = u(rng);
  for (float& x : b) x = u(rng);
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) c[i * ldc + j] = u(rng);
  std::vector<float> c0 = c;
  GemmT<float>(g.ta, g.tb, g.m, g.n, g.k, a.data(), lda, b.data(), ldb, c.data(), ldc, g.accumulate, pool, tuning);
  if (!check_ref) return c;
  auto av = [&](int64_t i, int64_t p) { return double(g.ta ? a[p * lda + i] : a[i * lda + p]); };
  auto bv = [&](int64_t p, int64_t j) { return double(g.tb ? b[j * ldb + p] : b[p * ldb + j]); };
  // Big cases check a sample of rows (the first panels, the last row, every 17th) in full.
  bool sample = g.m * g.n * g.k > (int64_t{1} << 24);
  int bad = 0;
  for (int64_t i = 0; i < g.m && bad < 5; ++i) {
    bool check = !sample || i < 26 || i == g.m - 1 || i % 17 == 0;
    for (int64_t j = 0; j < ldc && bad < 5; ++j) {
      float got = c[i * ldc + j];
      if (j >= g.n) {  // padding: never written
        if (got != kSentinel) ++bad;
        EXPECT_EQ(got, kSentinel) << Name(g) << " padding written at " << i << "," << j;
        continue;
      }
      if (!check) continue;
      double ref = g.accumulate ? double(c0[i * ldc + j]) : 0.0, mag = std::fabs(ref);
      for (int64_t p = 0; p < g.k; ++p) {
        ref += av(i, p) * bv(p, j);
        mag += std::fabs(av(i, p) * bv(p, j));
      }
      double tol = 4.0 * 6e-8 * double(g.k + 2) * mag + 1e-30;
      if (std::fabs(got - ref) > tol) ++bad;
      EXPECT_LE(std::fabs(got - ref), tol) << Name(g) << " at " << i << "," << j << " got " << got << " want " << ref;
    }
  }
  return c;
}

// Runs a case with no pool, 1 thread and 2 threads; all three must agree bit for bit.
void CheckCase(const GemmCase& g, ThreadPool& one, ThreadPool& two, uint32_t seed) {
  std::vector<float> c_none = RunCase(g, nullptr, seed, false);
  std::vector<float> c1 = RunCase(g, &one, seed, false);
  std::vector<float> c2 = RunCase(g, &two, seed, true);
  EXPECT_EQ(0, std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(float))) << Name(g) << " 1 vs 2 threads";
  EXPECT_EQ(0, std::memcmp(c_none.data(), c1.data(), c1.size() * sizeof(float))) << Name(g) << " no pool vs 1";
}

TEST(Sgemm, RandomOddShapesAllTransposes) {
  ThreadPool one(1), two(2);
  std::mt19937 rng(7);
  const int64_t dims[] = {1, 2, 3, 5, 7, 11, 12, 13, 14, 15, 16, 17, 28, 29, 31, 32, 33, 47, 64, 97, 101, 127, 131, 199, 257, 300};
  std::uniform_int_distribution<int> pick(0, sizeof(dims) / sizeof(dims[0]) - 1);
  for (int t = 0; t < 48; ++t) {
    GemmCase g{(t & 1) != 0, (t & 2) != 0, dims[pick(rng)], dims[pick(rng)], dims[pick(rng)]};
    g.pad = (t % 3 == 0) ? 0 : 1 + t % 7;
    g.accumulate = (t & 4) != 0;
    CheckCase(g, one, two, 100 + t);
  }
}

TEST(Sgemm, ZeroKAndTinyTiles) {
  ThreadPool one(1), two(2);
  for (int t = 0; t < 4; ++t) {
    bool ta = t & 1, tb = t & 2;
    for (bool acc : {false, true}) {
      CheckCase({ta, tb, 13, 17, 0, 3, acc}, one, two, 1);      // k = 0: C = 0 or unchanged
      CheckCase({ta, tb, 5, 9, 29, 2, acc}, one, two, 2);       // m < kMr, n < kNr
      CheckCase({ta, tb, 300, 1, 70, 0, acc}, one, two, 3);     // a single column
      CheckCase({ta, tb, 1, 300, 70, 5, acc}, one, two, 4);     // a single row
      CheckCase({ta, tb, 37, 45, 1, 1, acc}, one, two, 5);      // k = 1
    }
  }
}

TEST(Sgemm, SeveralKBlocksAndParallelPath) {
  ThreadPool one(1), two(2);
  for (int t = 0; t < 4; ++t) {
    bool ta = t & 1, tb = t & 2;
    CheckCase({ta, tb, 211, 173, 1201, 3, t == 1}, one, two, 10 + t);  // 3 k-blocks, parallel
    CheckCase({ta, tb, 128, 128, 128, 0, t == 2}, one, two, 20 + t);
  }
}

TEST(Sgemm, PackedBufferSplitsInKAndN) {
  ThreadPool one(1), two(2);
  // Row mode: packed B larger than one buffer: k-blocks in two groups, and (wide n) column blocks.
  CheckCase({false, true, 213, 2100, 1100, 1, true}, one, two, 30);
  CheckCase({true, true, 200, 14100, 300, 0, false}, one, two, 31);
  // Column mode (few rows): packed A larger than one buffer, so k-blocks in two groups.
  CheckCase({true, false, 190, 20, 10500, 2, true}, one, two, 32);
  // Column mode for a wide C with more rows than one A block.
  CheckCase({true, true, 230, 470, 400, 1, true}, one, two, 34);
  CheckCase({false, false, 230, 470, 400, 0, false}, one, two, 35);
  // Few B panels with two threads: rows split instead of columns.
  CheckCase({false, false, 128, 40, 300, 0, false}, one, two, 33);
}

// With 3 and 5 threads the parallel phases split into other chunks and threads run other parts
// of C; the bits must not change (row and column mode, both packs, column groups).
TEST(Sgemm, SameBitsWithThreeAndFiveThreads) {
  ThreadPool one(1), three(3), five(5);
  const GemmCase cases[] = {{false, false, 300, 200, 600, 1, false},   // row mode, B packed
                            {true, true, 256, 700, 300, 0, true},      // column mode (wide C)
                            {false, true, 100, 900, 520, 2, false},    // column mode (few rows)
                            {true, false, 420, 64, 1100, 0, true}};    // row mode, column groups
  uint32_t seed = 40;
  for (const GemmCase& g : cases) {
    std::vector<float> c1 = RunCase(g, &one, seed, true);
    for (ThreadPool* p : {&three, &five}) {
      std::vector<float> cn = RunCase(g, p, seed, false);
      EXPECT_EQ(0, std::memcmp(c1.data(), cn.data(), c1.size() * sizeof(float)))
          << Name(g) << " 1 vs " << p->threads() << " threads";
    }
    ++seed;
  }
}

// A decode step's shapes: up to 4 rows of C against a wide B (several column chunks, a ragged
// last one, k not a multiple of the 4 rows taken at once), and up to 4 columns of C against a
// tall A (run as the transpose); every transpose, accumulate on and off; the same bits with 1, 2,
// 3 and 5 threads (chunks narrow when there are few per thread).
TEST(Sgemm, FewRowsOrColumnsStreamTheWideOperand) {
  ThreadPool one(1), two(2), three(3), five(5);
  uint32_t seed = 60;
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    for (int64_t few = 1; few <= 4; ++few) {
      for (const GemmCase& g : {GemmCase{ta, tb, few, 2600, 203, 1, (few & 1) != 0},
                                GemmCase{ta, tb, 2600, few, 203, 2, (few & 1) == 0},
                                GemmCase{ta, tb, few, 700, 9, 0, false}}) {
        CheckCase(g, one, two, seed);
        std::vector<float> c1 = RunCase(g, &one, seed, false);
        for (ThreadPool* p : {&three, &five}) {
          std::vector<float> cn = RunCase(g, p, seed, false);
          EXPECT_EQ(0, std::memcmp(c1.data(), cn.data(), c1.size() * sizeof(float)))
              << Name(g) << " 1 vs " << p->threads() << " threads";
        }
        ++seed;
      }
    }
  }
}

// A decode step's half weights stream through the few-rows GEMM, widened piece by piece: the
// same bits as the dot of their widened f32 values (which takes the same path), for bf16 and
// f16, a half weight on either side (few rows of C, or few columns), both contracting sides,
// two batches, f16 and f32 results, 1 and 2 threads.
TEST(DotGeneral, HalfWeightsStreamLikeTheirF32Values) {
  ThreadPool two(2);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto make = [&](PrimitiveType t, std::vector<int64_t> dims, Buffer* wide) {
    auto owned = std::make_unique<Buffer>(Shape(t, dims));
    Buffer& half = *owned;
    const int64_t n = half.element_count();
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    const fused::HalfType h = t == PrimitiveType::kF16 ? fused::kHalfF16 : fused::kHalfBf16;
    fused::F32ToHalf(h, v.data(), half.as<uint16_t>(), n);
    fused::HalfToF32(h, half.as<uint16_t>(), wide->as<float>(), n);  // the exact widened values
    return owned;
  };
  const int64_t k = 203, big = 2600;
  for (PrimitiveType t : {PrimitiveType::kBF16, PrimitiveType::kF16}) {
    for (int few = 1; few <= 4; few += 3) {
      for (int variant = 0; variant < 4; ++variant) {
        const bool weight_is_rhs = variant & 1, contract_first = variant & 2;
        // weight [b, k, big] or [b, big, k]; activations [b, few, k] or [b, k, few].
        std::vector<int64_t> wdims = contract_first ? std::vector<int64_t>{2, k, big} : std::vector<int64_t>{2, big, k};
        std::vector<int64_t> xdims = contract_first ? std::vector<int64_t>{2, k, few} : std::vector<int64_t>{2, few, k};
        Buffer w32(Shape(PrimitiveType::kF32, wdims)), x32(Shape(PrimitiveType::kF32, xdims));
        std::unique_ptr<Buffer> wp = make(t, wdims, &w32), xp = make(t, xdims, &x32);
        const Buffer &w = *wp, &x = *xp;
        const int64_t c = contract_first ? 1 : 2;
        DotDimensionNumbers dn{{0}, {0}, {c}, {c}};
        std::vector<int64_t> out = weight_is_rhs ? std::vector<int64_t>{2, few, big} : std::vector<int64_t>{2, big, few};
        for (PrimitiveType ot : {PrimitiveType::kF32, t}) {
          for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &two}) {
            Buffer got(Shape(ot, out)), want(Shape(ot, out));
            const Buffer &l = weight_is_rhs ? x : w, &r = weight_is_rhs ? w : x;
            const Buffer &l32 = weight_is_rhs ? x32 : w32, &r32 = weight_is_rhs ? w32 : x32;
            ASSERT_TRUE(DotGeneral(l, r, dn, got, pool).ok());
            ASSERT_TRUE(DotGeneral(l32, r32, dn, want, pool).ok());
            EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.byte_size()))
                << PrimitiveTypeName(t) << " few=" << few << " variant=" << variant << " out " << PrimitiveTypeName(ot);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace hlox::rt

namespace hlox::rt {
namespace {

GemmTuning Knob(int which) {
  GemmTuning t;
  switch (which) {
    case 0: t.threads = 1; break;
    case 1: t.schedule = GemmTuning::kRows; break;
    case 2: t.schedule = GemmTuning::kColumns; break;
    case 3: t.mc_panels = 1; break;
    case 4: t.mc_panels = 64; break;
    case 5: t.nc_panels = 1; break;
    case 6: t.nc_panels = 16; break;
    case 7: t.b_panel_in_l1 = true; break;
    case 8: t.b_panel_in_l1 = true; t.mc_panels = 1; t.schedule = GemmTuning::kColumns; break;
    default: break;
  }
  return t;
}

TEST(GemmTuning, BlockingScheduleAndThreadsKeepTheDefaultsBits) {
  ThreadPool two(2);
  const GemmCase cases[] = {{false, false, 77, 131, 900}, {true, false, 200, 40, 300}, {false, true, 13, 517, 129},
                            {true, true, 96, 96, 1000, 3, true}, {false, false, 300, 9, 77}};
  for (const GemmCase& g : cases) {
    std::vector<float> base = RunCase(g, &two, 7, true);
    for (int knob = 0; knob < 9; ++knob) {
      std::vector<float> c = RunCase(g, &two, 7, false, Knob(knob));
      EXPECT_EQ(0, std::memcmp(base.data(), c.data(), c.size() * sizeof(float))) << Name(g) << " knob " << knob;
    }
  }
}

// Batched dots: threads over batches or inside each GEMM, same bits.
TEST(GemmTuning, BatchSplitKeepsBits) {
  ThreadPool two(2);
  DotDimensionNumbers dn;
  dn.lhs_batch = {0};
  dn.rhs_batch = {0};
  dn.lhs_contracting = {2};
  dn.rhs_contracting = {1};
  Buffer a(Shape::WithDefaultLayout(PrimitiveType::kF32, {6, 40, 70}));
  Buffer b(Shape::WithDefaultLayout(PrimitiveType::kF32, {6, 70, 90}));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (Buffer* x : {&a, &b}) {
    for (int64_t i = 0; i < x->shape().ElementCount(); ++i) x->as<float>()[i] = u(rng);
  }
  auto run = [&](GemmTuning::Batches split) {
    Buffer c(Shape::WithDefaultLayout(PrimitiveType::kF32, {6, 40, 90}));
    GemmTuning t;
    t.batches = split;
    EXPECT_TRUE(DotGeneral(a, b, dn, c, &two, 1.0, 0.0, t).ok());
    return std::vector<float>(c.as<float>(), c.as<float>() + c.shape().ElementCount());
  };
  std::vector<float> base = run(GemmTuning::kAutoBatches);
  EXPECT_EQ(base, run(GemmTuning::kSplitBatches));
  EXPECT_EQ(base, run(GemmTuning::kSplitEach));
}

TEST(GemmTuning, ParsesBackendConfigKeys) {
  GemmTuning t = ParseGemmTuning(
      R"({"hlox_gemm_mc":8, "hlox_gemm_nc":16,"hlox_gemm_schedule":2,"hlox_gemm_batches":1,"hlox_threads":1,
          "hlox_gemm_order":1})");
  EXPECT_EQ(t.mc_panels, 8);
  EXPECT_EQ(t.nc_panels, 16);
  EXPECT_EQ(t.schedule, GemmTuning::kColumns);
  EXPECT_EQ(t.batches, GemmTuning::kSplitBatches);
  EXPECT_EQ(t.threads, 1);
  EXPECT_TRUE(t.b_panel_in_l1);
  EXPECT_FALSE(t.IsDefault());
  // XLA's own keys, unknown values, negative or huge numbers and near-miss names change nothing.
  for (const char* config : {"", "garbage", R"({"outer_dimension_partitions":["1"]})",
                             R"({"hlox_gemm_schedule":7,"hlox_gemm_batches":9,"hlox_threads":0})",
                             R"({"hlox_gemm_mc":-5,"hlox_gemm_nc":"x","xhlox_gemm_mc":4})",
                             R"({"hlox_gemm_nc":99999999999999999})", R"({"hlox_gemm_order":2})"}) {
    EXPECT_TRUE(ParseGemmTuning(config).IsDefault()) << config;
  }
}

}  // namespace
}  // namespace hlox::rt
