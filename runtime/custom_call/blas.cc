// cuBLAS custom calls.
// __cublas$gemm: result = alpha_real * dot(lhs, rhs) + beta * bias, with dot dimension numbers
//   from the JSON backend_config (numbers may be strings, as XLA prints int64 fields); the
//   optional third operand is the bias (used when beta != 0); a tuple result's extra leaves
//   (workspace) are zeroed.
// cublas_trsm_batched: (a, b) -> (x, workspace...). jaxlib's descriptor is packed int32s:
//   type, batch, m, n, side (0 left), uplo (0 lower), trans (0 N, 1 T, 2 C), diag (0 non-unit).
//   The operands use column-major matrix layouts, so cuBLAS's A(i, j) is the logical a[..., i, j]
//   and the solve is plain op(a) x = b (left) or x op(a) = b (right) on logical matrices.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positives in Eigen
#include <Eigen/Dense>
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/custom_call/targets.h"
#include "runtime/kernels/linalg_core.h"
#include "runtime/kernels/scalar_access.h"

namespace hlox::rt {
namespace {

std::vector<int64_t> JsonDims(const nlohmann::json& j, const char* key) {
  std::vector<int64_t> out;
  if (!j.contains(key) || !j[key].is_array()) return out;
  for (const auto& v : j[key]) out.push_back(v.is_string() ? std::stoll(v.get<std::string>()) : v.get<int64_t>());
  return out;
}

double JsonNumber(const nlohmann::json& j, const char* key, double dflt) {
  if (!j.contains(key)) return dflt;
  const auto& v = j[key];
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return std::stod(v.get<std::string>());
  return dflt;
}

// [B, rows, cols] view of x: dims `first` (rows) after `batch`, then `second` (cols).
std::vector<double> AsBatchedMatrix(const Buffer& x, const std::vector<int64_t>& batch,
                                    const std::vector<int64_t>& first, const std::vector<int64_t>& second) {
  std::vector<int64_t> perm = batch;
  perm.insert(perm.end(), first.begin(), first.end());
  perm.insert(perm.end(), second.begin(), second.end());
  return Permute(ToDoubles(x), x.shape().dims(), perm);
}

std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end()) out.push_back(d);
  }
  return out;
}

int64_t Prod(const Shape& s, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= s.dim(d);
  return p;
}

}  // namespace

absl::StatusOr<Value> CcCublasGemm(const Instruction& instr, const std::vector<const Value*>& operands,
                                   KernelContext&) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* lhs, ArrayOperand(instr, operands, 0));
  HLOX_ASSIGN_OR_RETURN(const Buffer* rhs, ArrayOperand(instr, operands, 1));
  nlohmann::json cfg = nlohmann::json::parse(instr.attrs().backend_config, nullptr, false);
  if (cfg.is_discarded() || !cfg.is_object()) cfg = nlohmann::json::object();
  const Shape& ls = lhs->shape();
  const Shape& rs = rhs->shape();
  std::vector<int64_t> lb, rb, lc{ls.rank() - 1}, rc{0};
  double alpha = 1.0, beta = 0.0;
  try {
    if (cfg.contains("dot_dimension_numbers")) {
      const auto& dn = cfg["dot_dimension_numbers"];
      lb = JsonDims(dn, "lhs_batch_dimensions");
      rb = JsonDims(dn, "rhs_batch_dimensions");
      lc = JsonDims(dn, "lhs_contracting_dimensions");
      rc = JsonDims(dn, "rhs_contracting_dimensions");
    }
    alpha = JsonNumber(cfg, "alpha_real", 1.0);
    beta = JsonNumber(cfg, "beta", 0.0);
  } catch (const std::exception& e) {
    return KernelError(instr, absl::StrCat("bad gemm backend_config: ", e.what()));
  }
  auto valid = [](const std::vector<int64_t>& v, const Shape& s) {
    for (int64_t d : v) if (d < 0 || d >= s.rank()) return false;
    return true;
  };
  if (lb.size() != rb.size() || lc.size() != rc.size() || !valid(lb, ls) || !valid(lc, ls) ||
      !valid(rb, rs) || !valid(rc, rs)) {
    return KernelError(instr, "bad gemm dimension numbers");
  }
  for (size_t i = 0; i < lb.size(); ++i) if (ls.dim(lb[i]) != rs.dim(rb[i])) return KernelError(instr, "batch sizes differ");
  for (size_t i = 0; i < lc.size(); ++i) if (ls.dim(lc[i]) != rs.dim(rc[i])) return KernelError(instr, "contracting sizes differ");
  const std::vector<int64_t> lf = FreeDims(ls.rank(), lb, lc), rf = FreeDims(rs.rank(), rb, rc);
  const int64_t B = Prod(ls, lb), M = Prod(ls, lf), K = Prod(ls, lc), N = Prod(rs, rf);
  Value out = ZeroedResult(instr.shape());
  Buffer& res = ResultLeaf(out, 0);
  if (res.element_count() != B * M * N || !IsRealType(res.shape().element_type())) {
    return KernelError(instr, "gemm result size does not match the operands");
  }
  const std::vector<double> a = AsBatchedMatrix(*lhs, lb, lf, lc);
  const std::vector<double> b = AsBatchedMatrix(*rhs, rb, rc, rf);
  std::vector<double> c(B * M * N, 0.0);
  using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  for (int64_t i = 0; i < B && K > 0; ++i) {
    Eigen::Map<const Mat> am(a.data() + i * M * K, M, K);
    Eigen::Map<const Mat> bm(b.data() + i * K * N, K, N);
    Eigen::Map<Mat> cm(c.data() + i * M * N, M, N);
    cm.noalias() = am * bm;
  }
  std::vector<double> bias;
  if (beta != 0.0 && operands.size() >= 3) {
    HLOX_ASSIGN_OR_RETURN(const Buffer* bb, ArrayOperand(instr, operands, 2));
    if (bb->element_count() != B * M * N) return KernelError(instr, "bias size differs from the result");
    bias = ToDoubles(*bb);
  }
  for (int64_t i = 0; i < B * M * N; ++i) c[i] = alpha * c[i] + (bias.empty() ? 0.0 : beta * bias[i]);
  FromDoubles(c, res);
  return out;
}

absl::StatusOr<Value> CcTrsmBatched(const Instruction& instr, const std::vector<const Value*>& operands,
                                    KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* a, ArrayOperand(instr, operands, 0));
  HLOX_ASSIGN_OR_RETURN(const Buffer* b, ArrayOperand(instr, operands, 1));
  const Shape& as = a->shape();
  const Shape& bs = b->shape();
  Value out = ZeroedResult(instr.shape());
  Buffer& x = ResultLeaf(out, 0);
  if (as.rank() < 2 || bs.rank() != as.rank() || x.shape().dims() != bs.dims() ||
      !IsFloatingPoint(bs.element_type()) || !IsFloatingPoint(x.shape().element_type())) {
    return KernelError(instr, "trsm needs batched real matrices a, b and a result like b");
  }
  const bool left = BackendConfigInt32(instr, 16, 0) == 0;
  const bool lower = BackendConfigInt32(instr, 20, 0) == 0;
  const bool transpose = BackendConfigInt32(instr, 24, 0) != 0;
  const bool unit = BackendConfigInt32(instr, 28, 0) != 0;
  const int64_t m = bs.dim(bs.rank() - 2), n = bs.dim(bs.rank() - 1), k = as.dim(as.rank() - 1);
  if (as.dim(as.rank() - 2) != k || (left ? m : n) != k) return KernelError(instr, "a does not match b");
  const int64_t batch = m * n == 0 ? 0 : b->element_count() / (m * n);
  if (a->element_count() != batch * k * k) return KernelError(instr, "batch sizes differ");
  const std::vector<double> av = ToDoubles(*a);
  std::vector<double> xv = ToDoubles(*b);
  KernelParallelFor(ctx, batch, 1, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) {
      TriangularSolve(av.data() + i * k * k, xv.data() + i * m * n, m, n, left, lower, transpose, unit);
    }
  });
  FromDoubles(xv, x);
  return out;
}

}  // namespace hlox::rt
