// DotGeneral: canonicalizes dot_general to batched [m,k] x [k,n] GEMMs (see gemm/dot_general.h).
#include "runtime/gemm/dot_general.h"

#include <algorithm>
#include <complex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/core/kernel_util.h"
#include "runtime/core/strided_copy.h"
#include "runtime/gemm/gemm.h"
#include "runtime/math/half.h"

namespace hlox::rt {
namespace {

struct Operand {
  const uint8_t* data = nullptr;   // [batch, rows, cols] row-major, or transposed if trans
  bool trans = false;              // stored [batch, cols, rows]
  BufferPtr packed;                // owns data when a permutation had to be packed (pooled)
};

// Arranges an operand as [batch, outer, inner] (or [batch, inner, outer] when that needs no
// copy and `can_transpose`), packing with a transpose otherwise.
Operand Arrange(const Buffer& buf, const std::vector<int64_t>& batch, const std::vector<int64_t>& outer_dims,
                const std::vector<int64_t>& inner_dims, ThreadPool* pool) {
  Operand op;
  std::vector<int64_t> perm = batch;
  perm.insert(perm.end(), outer_dims.begin(), outer_dims.end());
  perm.insert(perm.end(), inner_dims.begin(), inner_dims.end());
  std::vector<int64_t> alt = batch;
  alt.insert(alt.end(), inner_dims.begin(), inner_dims.end());
  alt.insert(alt.end(), outer_dims.begin(), outer_dims.end());
  auto is_identity = [](const std::vector<int64_t>& p) {
    for (size_t i = 0; i < p.size(); ++i) if (p[i] != static_cast<int64_t>(i)) return false;
    return true;
  };
  if (is_identity(perm)) {
    op.data = buf.data();
  } else if (is_identity(alt)) {
    op.data = buf.data();
    op.trans = true;
  } else {
    op.packed = ScratchBuffer(buf.byte_size());
    TransposeCopy(buf.shape().dims(), perm, PrimitiveByteSize(buf.shape().element_type()), buf.data(),
                  op.packed->data(), pool);
    op.data = op.packed->data();
  }
  return op;
}

// An f16/bf16 buffer region widened to f32 in a pooled scratch buffer (no zeroing, pages reused
// from run to run), 16 lanes at a time and split over the pool: a decode step's f16 weight
// matrices are hundreds of MB, and widening them element by element into a fresh vector cost
// several times the GEMM itself.
BufferPtr ToF32(const uint8_t* data, PrimitiveType t, int64_t n, ThreadPool* pool) {
  BufferPtr out = ScratchBuffer(4 * std::max<int64_t>(1, n));
  float* d = reinterpret_cast<float*>(out->data());
  const uint16_t* p = reinterpret_cast<const uint16_t*>(data);
  const bool half = t == PrimitiveType::kF16;
  auto widen = [&](int64_t lo, int64_t hi) {
    fused::HalfToF32(half ? fused::kHalfF16 : fused::kHalfBf16, p + lo, d + lo, hi - lo);
  };
  if (pool != nullptr) pool->ParallelFor(n, 1 << 16, widen); else widen(0, n);
  return out;
}

template <typename T>
void IntGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  using U = std::make_unsigned_t<T>;
  std::vector<U> row(n);
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), U(0));
    for (int64_t p = 0; p < k; ++p) {
      U av = static_cast<U>(ta ? a[p * m + i] : a[i * k + p]);
      if (av == 0) continue;
      for (int64_t j = 0; j < n; ++j) {
        U bv = static_cast<U>(tb ? b[j * k + p] : b[p * n + j]);
        row[j] = static_cast<U>(row[j] + static_cast<U>(av * bv));
      }
    }
    for (int64_t j = 0; j < n; ++j) c[i * n + j] = static_cast<T>(row[j]);
  }
}

}  // namespace

GemmTuning ParseGemmTuning(const std::string& config) {
  GemmTuning t;
  int64_t v = 0;
  if (ReadConfigInt(config, "hlox_gemm_mc", &v)) t.mc_panels = v;
  if (ReadConfigInt(config, "hlox_gemm_nc", &v)) t.nc_panels = v;
  if (ReadConfigInt(config, "hlox_gemm_order", &v) && v == 1) t.b_panel_in_l1 = true;
  if (ReadConfigInt(config, "hlox_gemm_schedule", &v) && v <= GemmTuning::kColumns) {
    t.schedule = static_cast<GemmTuning::Schedule>(v);
  }
  if (ReadConfigInt(config, "hlox_gemm_batches", &v) && v <= GemmTuning::kSplitEach) {
    t.batches = static_cast<GemmTuning::Batches>(v);
  }
  if (ReadConfigInt(config, "hlox_threads", &v) && v == 1) t.threads = 1;
  return t;
}

absl::Status DotGeneral(const Buffer& lhs, const Buffer& rhs, const DotDimensionNumbers& dn, Buffer& out,
                        ThreadPool* pool, double alpha, double beta, const GemmTuning& tuning,
                        const DotEpilogue* epilogue) {
  if (tuning.threads == 1) pool = nullptr;
  const Shape& ls = lhs.shape();
  const Shape& rs = rhs.shape();
  if (dn.lhs_batch.size() != dn.rhs_batch.size() || dn.lhs_contracting.size() != dn.rhs_contracting.size()) {
    return absl::InvalidArgumentError("dot: batch/contracting dimension counts differ");
  }
  auto free_dims = [](const Shape& s, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    std::vector<int64_t> f;
    for (int64_t d = 0; d < s.rank(); ++d) {
      if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end()) f.push_back(d);
    }
    return f;
  };
  for (int64_t d : dn.lhs_batch) if (d < 0 || d >= ls.rank()) return absl::InvalidArgumentError("dot: bad lhs batch dim");
  for (int64_t d : dn.lhs_contracting) if (d < 0 || d >= ls.rank()) return absl::InvalidArgumentError("dot: bad lhs contracting dim");
  for (int64_t d : dn.rhs_batch) if (d < 0 || d >= rs.rank()) return absl::InvalidArgumentError("dot: bad rhs batch dim");
  for (int64_t d : dn.rhs_contracting) if (d < 0 || d >= rs.rank()) return absl::InvalidArgumentError("dot: bad rhs contracting dim");
  std::vector<int64_t> lf = free_dims(ls, dn.lhs_batch, dn.lhs_contracting);
  std::vector<int64_t> rf = free_dims(rs, dn.rhs_batch, dn.rhs_contracting);
  int64_t batch = 1, m = 1, n = 1, k = 1;
  std::vector<int64_t> want;
  for (size_t i = 0; i < dn.lhs_batch.size(); ++i) {
    if (ls.dim(dn.lhs_batch[i]) != rs.dim(dn.rhs_batch[i])) return absl::InvalidArgumentError("dot: batch dims differ");
    batch *= ls.dim(dn.lhs_batch[i]);
    want.push_back(ls.dim(dn.lhs_batch[i]));
  }
  for (size_t i = 0; i < dn.lhs_contracting.size(); ++i) {
    if (ls.dim(dn.lhs_contracting[i]) != rs.dim(dn.rhs_contracting[i])) return absl::InvalidArgumentError("dot: contracting dims differ");
    k *= ls.dim(dn.lhs_contracting[i]);
  }
  for (int64_t d : lf) { m *= ls.dim(d); want.push_back(ls.dim(d)); }
  for (int64_t d : rf) { n *= rs.dim(d); want.push_back(rs.dim(d)); }
  if (want != out.shape().dims()) {
    return absl::InvalidArgumentError(absl::StrCat("dot: result shape ", out.shape().ToString(false),
                                                   " does not match the operands"));
  }
  Operand a = Arrange(lhs, dn.lhs_batch, lf, dn.lhs_contracting, pool);   // [b, m, k]
  Operand b = Arrange(rhs, dn.rhs_batch, dn.rhs_contracting, rf, pool);   // [b, k, n]
  PrimitiveType t = out.shape().element_type();
  PrimitiveType lt = ls.element_type(), rt = rs.element_type();
  int64_t mn = m * n;
  if (mn == 0 || batch == 0) return absl::OkStatus();

  auto float_path = [&](auto zero) -> absl::Status {
    using T = decltype(zero);
    std::vector<T> acc;
    T* c;
    const T* ap;
    const T* bp;
    BufferPtr af, bf;  // widened operands
    bool stream_a = false, stream_b = false;  // a half operand left unwidened (f32 only)
    bool native = (t == lt && t == rt);
    if constexpr (std::is_same_v<T, float>) {
      native = native && t == PrimitiveType::kF32;
      for (PrimitiveType o : {lt, rt}) {
        if (o != PrimitiveType::kF32 && o != PrimitiveType::kF16 && o != PrimitiveType::kBF16) {
          return absl::UnimplementedError("dot: float result from a non-float operand");
        }
      }
      ap = reinterpret_cast<const T*>(a.data);
      bp = reinterpret_cast<const T*>(b.data);
      // A decode step's half weight (few rows of C against a half B, or few columns against a
      // half A) streams through the few-rows GEMM, widened piece by piece; only the other,
      // small operand is widened whole.
      stream_b = !native && rt != PrimitiveType::kF32 && m <= 4 && k > 0;
      stream_a = !native && !stream_b && lt != PrimitiveType::kF32 && n <= 4 && a.trans && k > 0;
      if (!native && lt != PrimitiveType::kF32 && !stream_a) {
        af = ToF32(a.data, lt, batch * m * k, pool);
        ap = reinterpret_cast<const T*>(af->data());
      }
      if (!native && rt != PrimitiveType::kF32 && !stream_b) {
        bf = ToF32(b.data, rt, batch * k * n, pool);
        bp = reinterpret_cast<const T*>(bf->data());
      }
    } else {
      if (!native) return absl::UnimplementedError("dot: mixed operand types");
      ap = reinterpret_cast<const T*>(a.data);
      bp = reinterpret_cast<const T*>(b.data);
    }
    bool direct = native && alpha == 1.0 && beta == 0.0;
    if (direct) {
      c = reinterpret_cast<T*>(out.data());
    } else {
      acc.resize(batch * mn);
      c = acc.data();
    }
    // Batches in parallel when there are many, or each is too small for the GEMM's own split to
    // balance well, with at least kParallelMinMnk multiply-adds per chunk (smaller ones do not
    // repay a fork/join); otherwise each batch's GEMM splits its rows or columns. Every batch is
    // one deterministic GEMM either way, so the choice never changes bits.
    // With an epilogue, each final part of a batch's C becomes runs of the output: whole rows as
    // one run, narrower parts a run per row.
    auto one = [&](int64_t bi, ThreadPool* p) {
      GemmDone done;
      if (direct && epilogue != nullptr) {
        done = [&, base = bi * mn](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
          if (c0 == 0 && c1 == n) (*epilogue)(base + r0 * n, 1, 0, (r1 - r0) * n);
          else (*epilogue)(base + r0 * n + c0, r1 - r0, n, c1 - c0);
        };
      }
      const int64_t lda = a.trans ? m : k, ldb = b.trans ? k : n;
      if constexpr (std::is_same_v<T, float>) {
        if (stream_b && SgemmHalfStreamed(a.trans, b.trans, m, n, k, ap + bi * m * k, lda,
                                          reinterpret_cast<const uint16_t*>(b.data) + bi * k * n, ldb, fused::HalfTypeOf(rt),
                                          true, c + bi * mn, n, p, tuning, done ? &done : nullptr)) {
          return;
        }
        if (stream_a && SgemmHalfStreamed(a.trans, b.trans, m, n, k, bp + bi * k * n, ldb,
                                          reinterpret_cast<const uint16_t*>(a.data) + bi * m * k, lda, fused::HalfTypeOf(lt),
                                          false, c + bi * mn, n, p, tuning, done ? &done : nullptr)) {
          return;
        }
      }
      GemmT<T>(a.trans, b.trans, m, n, k, ap + bi * m * k, lda, bp + bi * k * n, ldb, c + bi * mn, n, false, p, tuning,
               done ? &done : nullptr);
    };
    int64_t mnk = std::max<int64_t>(1, mn * std::max<int64_t>(1, k));
    bool split_batches = batch > 1 && pool != nullptr &&
                         (batch >= 4 * int64_t{pool->threads()} || mnk < kBatchSplitMaxMnk);
    if (batch > 1 && pool != nullptr && tuning.batches != GemmTuning::kAutoBatches) {
      split_batches = tuning.batches == GemmTuning::kSplitBatches;
    }
    if (split_batches) {
      int64_t grain = std::max<int64_t>(1, kParallelMinMnk / mnk);
      pool->ParallelFor(batch, grain, [&](int64_t lo, int64_t hi) { for (int64_t bi = lo; bi < hi; ++bi) one(bi, nullptr); });
    } else {
      for (int64_t bi = 0; bi < batch; ++bi) one(bi, pool);
    }
    if (!direct) {
      int64_t total = batch * mn;
      if (t == PrimitiveType::kF32 || t == PrimitiveType::kF64 || t == PrimitiveType::kC64 || t == PrimitiveType::kC128) {
        T* o = reinterpret_cast<T*>(out.data());
        for (int64_t i = 0; i < total; ++i) o[i] = static_cast<T>(alpha) * c[i] + (beta == 0.0 ? T(0) : static_cast<T>(beta) * o[i]);
      } else if constexpr (std::is_same_v<T, float>) {
        uint16_t* o = out.as<uint16_t>();
        bool half = t == PrimitiveType::kF16;
        for (int64_t i = 0; i < total; ++i) {
          float prev = beta == 0.0 ? 0.f : (half ? LoadHalf(o[i]) : LoadBf16(o[i]));
          float v = static_cast<float>(alpha) * c[i] + static_cast<float>(beta) * prev;
          o[i] = half ? StoreHalf(v) : StoreBf16(v);
        }
      }
      if (epilogue != nullptr) (*epilogue)(0, 1, 0, total);
    }
    return absl::OkStatus();
  };

  switch (t) {
    case PrimitiveType::kF32: case PrimitiveType::kF16: case PrimitiveType::kBF16:
      return float_path(float{});
    case PrimitiveType::kF64: return float_path(double{});
    case PrimitiveType::kC64: return float_path(std::complex<float>{});
    case PrimitiveType::kC128: return float_path(std::complex<double>{});
    default: break;
  }
  if (lt != t || rt != t) return absl::UnimplementedError("dot: integer operands must match the result type");
  auto int_path = [&](auto zero) {
    using T = decltype(zero);
    const T* ap = reinterpret_cast<const T*>(a.data);
    const T* bp = reinterpret_cast<const T*>(b.data);
    T* c = reinterpret_cast<T*>(out.data());
    auto body = [&](int64_t lo, int64_t hi) {
      for (int64_t bi = lo; bi < hi; ++bi) IntGemm<T>(a.trans, b.trans, m, n, k, ap + bi * m * k, bp + bi * k * n, c + bi * mn);
    };
    if (pool) pool->ParallelFor(batch, 1, body); else body(0, batch);
    if (epilogue != nullptr) (*epilogue)(0, 1, 0, batch * mn);
    return absl::OkStatus();
  };
  switch (t) {
    case PrimitiveType::kS8: return int_path(int8_t{});
    case PrimitiveType::kS16: return int_path(int16_t{});
    case PrimitiveType::kS32: return int_path(int32_t{});
    case PrimitiveType::kS64: return int_path(int64_t{});
    case PrimitiveType::kU8: return int_path(uint8_t{});
    case PrimitiveType::kU16: return int_path(uint16_t{});
    case PrimitiveType::kU32: return int_path(uint32_t{});
    case PrimitiveType::kU64: return int_path(uint64_t{});
    default:
      return absl::UnimplementedError(absl::StrCat("dot: element type ", std::string(PrimitiveTypeName(t)), " not supported"));
  }
}

}  // namespace hlox::rt
