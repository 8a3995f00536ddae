// sort (multi-operand, along one dimension, any comparator) and topk. Sorting is always stable
// (valid whether or not is_stable is set). Comparators that are a single compare of parameters
// 0 and 1 sort on precomputed keys (TOTALORDER floats: -NaN < -inf < ... < -0 < +0 < ... < inf
// < NaN); other comparators run on the scalar interpreter, or through the executor when the
// interpreter cannot compile them. Independent slices are sorted in parallel.
#include <algorithm>
#include <bit>
#include <numeric>
#include <vector>

#include "runtime/kernels/scalar_access.h"
#include "runtime/kernels/scalar_program.h"

namespace hlox::rt {
namespace {

// Order-preserving int64 key of element i: TOTALORDER for floats, value order for ints.
int64_t OrderKey(const Buffer& b, int64_t i) {
  const PrimitiveType t = b.shape().element_type();
  if (IsFloatingPoint(t)) {
    const int64_t bits = std::bit_cast<int64_t>(LoadDouble(b, i));
    return bits < 0 ? (bits ^ INT64_MAX) : bits;
  }
  if (t == PrimitiveType::kU64) return static_cast<int64_t>(b.as<uint64_t>()[i] ^ (uint64_t{1} << 63));
  return ReadIndex(b, i);
}

struct SliceGeometry {
  int64_t outer = 1, len = 1, inner = 1;
};

SliceGeometry Geometry(const Shape& s, int64_t dim) {
  SliceGeometry g;
  for (int64_t d = 0; d < s.rank(); ++d) {
    if (d < dim) g.outer *= s.dim(d);
    else if (d == dim) g.len = s.dim(d);
    else g.inner *= s.dim(d);
  }
  return g;
}

// Copies slice elements of `src` into `dst` in the order `perm` (first k entries).
void PermuteSlice(const Buffer& src, Buffer& dst, int64_t src_base, int64_t dst_base, int64_t inner,
                  const std::vector<int64_t>& perm, int64_t k) {
  const int64_t sz = PrimitiveByteSize(src.shape().element_type());
  for (int64_t j = 0; j < k; ++j) {
    std::memcpy(dst.data() + (dst_base + j * inner) * sz, src.data() + (src_base + perm[j] * inner) * sz, sz);
  }
}

absl::StatusOr<Value> TopK(const Instruction& instr, const Buffer& in, KernelContext& ctx) {
  const Shape& os = instr.shape();
  const Shape& is = in.shape();
  if (!os.IsTuple() || os.tuple_size() != 2 || is.rank() < 1) return KernelError(instr, "topk needs a (values, indices) result");
  const int64_t k = instr.attrs().k;
  const SliceGeometry g = Geometry(is, is.rank() - 1);
  if (k < 0 || k > g.len || os.tuple_shape(0).ElementCount() != g.outer * k) {
    return KernelError(instr, "bad k for topk");
  }
  Value vals = NewArray(os.tuple_shape(0));
  Value idx = NewArray(os.tuple_shape(1));
  const bool largest = instr.attrs().largest;
  KernelParallelFor(ctx, g.outer, 16, [&](int64_t b, int64_t e) {
    std::vector<int64_t> perm(g.len), key(g.len);
    for (int64_t o = b; o < e; ++o) {
      for (int64_t j = 0; j < g.len; ++j) key[j] = OrderKey(in, o * g.len + j);
      std::iota(perm.begin(), perm.end(), 0);
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
        return largest ? key[x] > key[y] : key[x] < key[y];
      });
      PermuteSlice(in, *vals.array, o * g.len, o * k, 1, perm, k);
      for (int64_t j = 0; j < k; ++j) StoreDouble(*idx.array, o * k + j, static_cast<double>(perm[j]));
    }
  });
  return Value::Tuple({vals, idx});
}

}  // namespace

absl::StatusOr<Value> SortKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                 KernelContext& ctx) {
  std::vector<const Buffer*> in(operands.size());
  for (size_t i = 0; i < operands.size(); ++i) {
    HLOX_ASSIGN_OR_RETURN(in[i], ArrayOperand(instr, operands, i));
  }
  if (in.empty()) return KernelError(instr, "no operands");
  if (instr.opcode() == Opcode::kTopK) return TopK(instr, *in[0], ctx);
  const Shape& s0 = in[0]->shape();
  for (const Buffer* b : in) {
    if (b->shape().dims() != s0.dims()) return KernelError(instr, "sort operands must share dims");
  }
  const int64_t dim = instr.dimensions().empty() ? s0.rank() - 1 : instr.dimensions()[0];
  if (dim < 0 || dim >= std::max<int64_t>(s0.rank(), 1)) return KernelError(instr, "bad sort dimension");
  const SliceGeometry g = Geometry(s0, dim);
  const Computation* comp = instr.to_apply();
  if (comp == nullptr) return KernelError(instr, "missing comparator");
  if (comp->parameter_count() != 2 * static_cast<int64_t>(in.size())) {
    return KernelError(instr, "comparator must take two parameters per operand");
  }
  // Fast path: root = compare(param a, param b) with {a, b} = {2j, 2j+1}.
  const Instruction* root = comp->root();
  int key_operand = -1;
  bool descending = false, total = false;
  if (root->opcode() == Opcode::kCompare && root->operand(0)->opcode() == Opcode::kParameter &&
      root->operand(1)->opcode() == Opcode::kParameter && root->attrs().comparison.has_value()) {
    const int64_t pa = root->operand(0)->parameter_number(), pb = root->operand(1)->parameter_number();
    const ComparisonDirection d = *root->attrs().comparison;
    if (pa / 2 == pb / 2 && pa != pb && (d == ComparisonDirection::kLt || d == ComparisonDirection::kGt)) {
      key_operand = static_cast<int>(pa / 2);
      descending = (d == ComparisonDirection::kGt) != (pa > pb);
      total = root->attrs().comparison_type == "TOTALORDER" ||
              !IsFloatingPoint(in[key_operand]->shape().element_type());
    }
  }
  std::optional<ScalarProgram> prog;
  if (key_operand < 0) prog = ScalarProgram::Compile(*comp);
  std::vector<Value> outs;
  for (const Buffer* b : in) outs.push_back(NewArray(b->shape()));
  const int64_t slices = g.outer * g.inner;
  auto sort_slice = [&](int64_t sl, std::vector<int64_t>& perm, std::vector<int64_t>& key,
                        std::vector<double>& fkey, std::vector<SVal>& args, std::vector<SVal>& scratch) -> absl::Status {
    const int64_t o = sl / g.inner, inn = sl % g.inner;
    const int64_t base = o * g.len * g.inner + inn;
    std::iota(perm.begin(), perm.end(), 0);
    absl::Status st;
    if (key_operand >= 0) {
      const Buffer& kb = *in[key_operand];
      if (total) {
        for (int64_t j = 0; j < g.len; ++j) key[j] = OrderKey(kb, base + j * g.inner);
        std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
          return descending ? key[x] > key[y] : key[x] < key[y];
        });
      } else {
        for (int64_t j = 0; j < g.len; ++j) fkey[j] = LoadDouble(kb, base + j * g.inner);
        std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
          return descending ? fkey[x] > fkey[y] : fkey[x] < fkey[y];
        });
      }
    } else if (prog.has_value()) {
      std::vector<std::vector<SVal>> vals(in.size(), std::vector<SVal>(g.len));
      for (size_t i = 0; i < in.size(); ++i) {
        for (int64_t j = 0; j < g.len; ++j) vals[i][j] = LoadSVal(*in[i], base + j * g.inner);
      }
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
        for (size_t i = 0; i < in.size(); ++i) {
          args[2 * i] = vals[i][x];
          args[2 * i + 1] = vals[i][y];
        }
        SVal r;
        prog->Run(args.data(), &r, scratch);
        return r.i != 0;
      });
    } else {
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
        if (!st.ok()) return false;
        std::vector<Value> a;
        for (const Buffer* b : in) {
          a.push_back(ElementValue(*b, base + x * g.inner));
          a.push_back(ElementValue(*b, base + y * g.inner));
        }
        auto r = CallComputation(ctx, *comp, a);
        if (!r.ok() || r->empty()) {
          st = r.ok() ? KernelError(instr, "comparator returned nothing") : r.status();
          return false;
        }
        return LoadDouble(*(*r)[0], 0) != 0;
      });
    }
    for (size_t i = 0; i < in.size(); ++i) {
      const int64_t sz = PrimitiveByteSize(in[i]->shape().element_type());
      for (int64_t j = 0; j < g.len; ++j) {
        std::memcpy(outs[i].array->data() + (base + j * g.inner) * sz,
                    in[i]->data() + (base + perm[j] * g.inner) * sz, sz);
      }
    }
    return st;
  };
  absl::Status status;
  auto run = [&](int64_t b, int64_t e) {
    std::vector<int64_t> perm(g.len), key(g.len);
    std::vector<double> fkey(g.len);
    std::vector<SVal> args(2 * in.size()), scratch;
    for (int64_t sl = b; sl < e; ++sl) {
      absl::Status st = sort_slice(sl, perm, key, fkey, args, scratch);
      if (!st.ok()) {
        status = st;
        return;
      }
    }
  };
  if (key_operand >= 0 || prog.has_value()) {
    KernelParallelFor(ctx, slices, std::max<int64_t>(1, 2048 / std::max<int64_t>(g.len, 1)), run);
  } else {
    run(0, slices);
  }
  HLOX_RETURN_IF_ERROR(status);
  if (!instr.shape().IsTuple()) return outs[0];
  return Value::Tuple(std::move(outs));
}

}  // namespace hlox::rt
