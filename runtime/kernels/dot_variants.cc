// Index plans and accumulator loads/stores for the dot variants (see dot_variants.h).
#include "runtime/kernels/dot_variants.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ir/shape_inference.h"
#include "ir/small_float.h"
#include "runtime/core/kernel_util.h"
#include "runtime/kernels/scalar_access.h"

namespace hlox::rt {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

absl::Status TypeError(const Buffer& b, const char* what) {
  return absl::UnimplementedError(absl::StrCat("element type ", std::string(PrimitiveTypeName(b.shape().element_type())),
                                               " is not supported here (", what, ")"));
}

}  // namespace

DotIndexPlan MakeDotIndexPlan(const std::vector<int64_t>& lhs_dims, const std::vector<int64_t>& rhs_dims,
                              const DotDimensionNumbers& d, int64_t rhs_skip) {
  const std::vector<int64_t> ls = RowMajorStrides(lhs_dims), rs = RowMajorStrides(rhs_dims);
  DotIndexPlan p;
  auto add = [&](int64_t size, int64_t lhs_dim, int64_t lstride, int64_t rstride) {
    p.out_dims.push_back(size);
    p.out_lhs_dim.push_back(lhs_dim);
    p.out_lhs_stride.push_back(lstride);
    p.out_rhs_stride.push_back(rstride);
    p.out_count *= size;
  };
  for (size_t i = 0; i < d.lhs_batch.size(); ++i) {
    add(lhs_dims[d.lhs_batch[i]], d.lhs_batch[i], ls[d.lhs_batch[i]], rs[d.rhs_batch[i]]);
  }
  for (int64_t i = 0; i < static_cast<int64_t>(lhs_dims.size()); ++i) {
    if (!Contains(d.lhs_batch, i) && !Contains(d.lhs_contracting, i)) add(lhs_dims[i], i, ls[i], 0);
  }
  for (int64_t i = 0; i < static_cast<int64_t>(rhs_dims.size()); ++i) {
    if (!Contains(d.rhs_batch, i) && !Contains(d.rhs_contracting, i) && i != rhs_skip) add(rhs_dims[i], -1, 0, rs[i]);
  }
  for (int64_t c : d.lhs_contracting) p.k_dims.push_back(lhs_dims[c]);
  int64_t k_count = 1;
  for (int64_t s : p.k_dims) k_count *= s;
  p.lhs_k.resize(k_count);
  p.rhs_k.resize(k_count);
  std::vector<int64_t> idx(p.k_dims.size(), 0);
  for (int64_t k = 0; k < k_count; ++k) {
    int64_t lo = 0, ro = 0;
    for (size_t j = 0; j < idx.size(); ++j) {
      lo += idx[j] * ls[d.lhs_contracting[j]];
      ro += idx[j] * rs[d.rhs_contracting[j]];
    }
    p.lhs_k[k] = lo;
    p.rhs_k[k] = ro;
    NextIndex(idx, p.k_dims);
  }
  return p;
}

void DotOutputBases(const DotIndexPlan& p, int64_t o, int64_t* lhs_base, int64_t* rhs_base,
                    std::vector<int64_t>* out_coords) {
  int64_t lb = 0, rb = 0;
  if (out_coords) out_coords->assign(p.out_dims.size(), 0);
  for (int64_t j = static_cast<int64_t>(p.out_dims.size()) - 1; j >= 0; --j) {
    const int64_t c = p.out_dims[j] == 0 ? 0 : o % p.out_dims[j];
    if (p.out_dims[j] != 0) o /= p.out_dims[j];
    lb += c * p.out_lhs_stride[j];
    rb += c * p.out_rhs_stride[j];
    if (out_coords) (*out_coords)[j] = c;
  }
  *lhs_base = lb;
  *rhs_base = rb;
}

absl::Status CheckVerifiedShape(const Instruction& instr) {
  absl::StatusOr<Shape> s = InferInstructionShape(instr);
  if (!s.ok()) return KernelError(instr, std::string(s.status().message()));
  if (!instr.shape().IsArray() || s->dims() != instr.shape().dims()) {
    return KernelError(instr, absl::StrCat("result dims differ from the operands' ", s->ToString(false)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> LoadReals(const Buffer& b) {
  const PrimitiveType t = b.shape().element_type();
  std::vector<double> v(b.element_count());
  if (std::optional<SmallFloatFormat> f = SmallFloatFormatOf(t)) {
    const uint8_t* codes = b.as<uint8_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = SmallFloatDecode(*f, codes[i]);
    return v;
  }
  if (!IsRealType(t)) return TypeError(b, "a real type is needed");
  for (size_t i = 0; i < v.size(); ++i) v[i] = LoadDouble(b, static_cast<int64_t>(i));
  return v;
}

absl::StatusOr<std::vector<std::complex<double>>> LoadComplexes(const Buffer& b) {
  const PrimitiveType t = b.shape().element_type();
  std::vector<std::complex<double>> v(b.element_count());
  if (t == PrimitiveType::kC64) {
    const std::complex<float>* x = b.as<std::complex<float>>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = std::complex<double>(x[i].real(), x[i].imag());
    return v;
  }
  if (t == PrimitiveType::kC128) {
    const std::complex<double>* x = b.as<std::complex<double>>();
    std::copy(x, x + v.size(), v.begin());
    return v;
  }
  absl::StatusOr<std::vector<double>> r = LoadReals(b);
  if (!r.ok()) return r.status();
  for (size_t i = 0; i < v.size(); ++i) v[i] = (*r)[i];
  return v;
}

absl::StatusOr<std::vector<uint64_t>> LoadIntegers(const Buffer& b) {
  const PrimitiveType t = b.shape().element_type();
  if (!IsInteger(t) || PrimitiveBitWidth(t) < 8) return TypeError(b, "an integer result takes integer operands");
  std::vector<uint64_t> v(b.element_count());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint64_t>(ReadIndex(b, static_cast<int64_t>(i)));
  return v;
}

void StoreReals(const std::vector<double>& v, Buffer& out) {
  for (size_t i = 0; i < v.size(); ++i) StoreDouble(out, static_cast<int64_t>(i), v[i]);
}

void StoreComplexes(const std::vector<std::complex<double>>& v, Buffer& out) {
  if (out.shape().element_type() == PrimitiveType::kC64) {
    std::complex<float>* o = out.as<std::complex<float>>();
    for (size_t i = 0; i < v.size(); ++i) o[i] = std::complex<float>(v[i]);
  } else {
    std::copy(v.begin(), v.end(), out.as<std::complex<double>>());
  }
}

void StoreIntegers(const std::vector<uint64_t>& v, Buffer& out) {
  auto put = [&](auto* o) {
    using T = std::remove_pointer_t<decltype(o)>;
    for (size_t i = 0; i < v.size(); ++i) o[i] = static_cast<T>(v[i]);  // modular, as C++20 defines it
  };
  switch (out.shape().element_type()) {
    case PrimitiveType::kS8: put(out.as<int8_t>()); break;
    case PrimitiveType::kS16: put(out.as<int16_t>()); break;
    case PrimitiveType::kS32: put(out.as<int32_t>()); break;
    case PrimitiveType::kS64: put(out.as<int64_t>()); break;
    case PrimitiveType::kU8: put(out.as<uint8_t>()); break;
    case PrimitiveType::kU16: put(out.as<uint16_t>()); break;
    case PrimitiveType::kU32: put(out.as<uint32_t>()); break;
    default: put(out.as<uint64_t>()); break;
  }
}

}  // namespace hlox::rt
