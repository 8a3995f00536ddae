// The strided copy engine against a one-element-at-a-time reference: random shapes and
// strides (zero for broadcasts, negative for reverses, permuted for transposes, so the fill,
// repeated-row, tiled-transpose and segmented paths all run), every element size, with no
// pool and with a 2-thread pool; plus a scatter round trip.
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/core/strided_copy.h"
#include "runtime/core/thread_pool.h"

namespace hlox::rt {
namespace {

// out[i] = src[offset + dot(idx(i), strides)] element by element, element size es.
std::vector<uint8_t> Reference(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                               int64_t offset, int64_t es, const std::vector<uint8_t>& src) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<uint8_t> out(n * es);
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = offset;
    for (size_t d = 0; d < dims.size(); ++d) off += idx[d] * strides[d];
    std::memcpy(out.data() + i * es, src.data() + off * es, es);
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

struct Case {
  std::vector<int64_t> dims, strides;
  int64_t offset = 0, src_elems = 0;
};

// A random view of a random dense source: a permutation of it, with some dims broadcast
// (stride 0) and some reversed.
Case RandomCase(std::mt19937_64& rng, bool large) {
  auto r = [&](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng() % (hi - lo + 1)); };
  const int64_t rank = r(1, 4);
  std::vector<int64_t> src_dims(rank);
  for (auto& d : src_dims) d = large ? r(1, 40) : r(1, 9);
  std::vector<int64_t> src_str(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d) src_str[d] = src_str[d + 1] * src_dims[d + 1];
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  Case c;
  c.src_elems = src_str[0] * src_dims[0];
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t d = perm[i];
    const int kind = static_cast<int>(r(0, 5));
    if (kind == 0) {  // broadcast: a new dim read with stride 0
      c.dims.push_back(r(1, large ? 12 : 6));
      c.strides.push_back(0);
    }
    c.dims.push_back(src_dims[d]);
    if (kind == 1) {  // reversed
      c.strides.push_back(-src_str[d]);
      c.offset += (src_dims[d] - 1) * src_str[d];
    } else {
      c.strides.push_back(src_str[d]);
    }
  }
  return c;
}

TEST(StridedCopyTest, MatchesReferenceForRandomViews) {
  std::mt19937_64 rng(5);
  ThreadPool pool(2);
  const int64_t sizes[] = {1, 2, 4, 8, 16, 3};
  for (int iter = 0; iter < 600; ++iter) {
    const bool large = iter % 5 == 0;
    Case c = RandomCase(rng, large);
    int64_t n = 1;
    for (int64_t d : c.dims) n *= d;
    if (n > (1 << 18) || c.src_elems > (1 << 18)) continue;  // keep the reference quick
    const int64_t es = sizes[iter % 6];
    std::vector<uint8_t> src(c.src_elems * es);
    for (auto& b : src) b = static_cast<uint8_t>(rng());
    std::vector<uint8_t> want = Reference(c.dims, c.strides, c.offset, es, src);
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::vector<uint8_t> got(want.size(), 0xEE);
      StridedCopy(c.dims, c.strides, c.offset, es, src.data(), got.data(), p);
      ASSERT_EQ(got, want) << "iter " << iter << " es " << es << " rank " << c.dims.size();
    }
  }
}

TEST(StridedCopyTest, LargeBroadcastsAndTransposes) {
  ThreadPool pool(2);
  std::mt19937_64 rng(9);
  // Scalar to 1M floats (one huge fill row, split in segments); [37] repeated 30000 times;
  // a 300 x 517 transpose (tiled, with partial tiles).
  std::vector<Case> cases(3);
  cases[0].dims = {1 << 20}; cases[0].strides = {0}; cases[0].src_elems = 1;
  cases[1].dims = {100, 300, 37}; cases[1].strides = {0, 0, 1}; cases[1].src_elems = 37;
  cases[2].dims = {517, 300}; cases[2].strides = {1, 517}; cases[2].src_elems = 300 * 517;
  for (const Case& c : cases) {
    std::vector<uint8_t> src(c.src_elems * 4);
    for (auto& b : src) b = static_cast<uint8_t>(rng());
    std::vector<uint8_t> want = Reference(c.dims, c.strides, 0, 4, src);
    std::vector<uint8_t> got(want.size(), 0);
    StridedCopy(c.dims, c.strides, 0, 4, src.data(), got.data(), &pool);
    EXPECT_EQ(got, want);
  }
}

TEST(StridedCopyTest, ScatterIsTheInverseOfGather) {
  ThreadPool pool(2);
  std::mt19937_64 rng(13);
  // Write a dense [5, 7, 300] block into a [9, 300, 8] buffer transposed and offset, then read
  // it back with the same strides.
  const std::vector<int64_t> dims = {5, 7, 300}, strides = {300 * 8, 1, 8};
  const int64_t offset = 2 * 300 * 8 + 1;
  std::vector<uint8_t> block(5 * 7 * 300 * 4), big(9 * 300 * 8 * 4, 0), back(block.size(), 0);
  for (auto& b : block) b = static_cast<uint8_t>(rng());
  StridedScatterCopy(dims, strides, offset, 4, block.data(), big.data(), &pool);
  StridedCopy(dims, strides, offset, 4, big.data(), back.data(), &pool);
  EXPECT_EQ(back, block);
}

}  // namespace
}  // namespace hlox::rt
