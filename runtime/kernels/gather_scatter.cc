// gather and scatter with every dimension-number form: offset/collapsed/batching dims,
// index_vector_dim anywhere (== rank of the indices means an implicit trailing 1), and
// variadic scatter. Gather clamps start indices so the whole slice is in bounds, as XLA does;
// scatter skips an update window whose start would put any part of it out of bounds.
// Gather copies element bytes (exact for every type). Scatter applies updates in row-major
// update order; add/multiply/max/min/assign update computations take a fast path, anything
// else calls the computation through the executor.
#include <algorithm>
#include <vector>

#include "runtime/kernels/scalar_access.h"
#include "runtime/kernels/scalar_program.h"

namespace hlox::rt {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Reads the index vector for batch position `batch` (indices dims except index_vector_dim).
struct IndexReader {
  const Buffer* indices;
  int64_t ivd;  // index_vector_dim
  std::vector<int64_t> strides, batch_dims;  // indices dims other than ivd, in order

  IndexReader(const Buffer* b, int64_t index_vector_dim) : indices(b), ivd(index_vector_dim) {
    strides = RowMajorStrides(b->shape().dims());
    for (int64_t d = 0; d < b->shape().rank(); ++d) {
      if (d != ivd) batch_dims.push_back(d);
    }
  }
  // Linear offset of the batch multi-index `g` (one entry per batch_dims).
  int64_t BaseOffset(const std::vector<int64_t>& g) const {
    int64_t off = 0;
    for (size_t i = 0; i < batch_dims.size(); ++i) off += g[i] * strides[batch_dims[i]];
    return off;
  }
  int64_t Component(int64_t base, int64_t k) const {
    const int64_t off = ivd < indices->shape().rank() ? base + k * strides[ivd] : base;
    return ReadIndex(*indices, off);
  }
  // The batch dims' sizes.
  std::vector<int64_t> BatchSizes() const {
    std::vector<int64_t> s;
    for (int64_t d : batch_dims) s.push_back(indices->shape().dim(d));
    return s;
  }
  // Position of indices dim `d` within batch_dims (or -1).
  int64_t BatchPos(int64_t d) const {
    for (size_t i = 0; i < batch_dims.size(); ++i) {
      if (batch_dims[i] == d) return static_cast<int64_t>(i);
    }
    return -1;
  }
};

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

}  // namespace

absl::StatusOr<Value> GatherKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                   KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* operand, ArrayOperand(instr, operands, 0));
  HLOX_ASSIGN_OR_RETURN(const Buffer* indices, ArrayOperand(instr, operands, 1));
  if (!instr.attrs().gather.has_value()) return KernelError(instr, "missing gather dimension numbers");
  const GatherDimensionNumbers& dn = *instr.attrs().gather;
  const Shape& os = instr.shape();
  const Shape& ps = operand->shape();
  const std::vector<int64_t>& sizes = instr.attrs().gather_slice_sizes;
  const int64_t rank = ps.rank();
  if (!os.IsArray() || static_cast<int64_t>(sizes.size()) != rank ||
      dn.index_vector_dim < 0 || dn.index_vector_dim > indices->shape().rank() ||
      dn.operand_batching_dims.size() != dn.start_indices_batching_dims.size()) {
    return KernelError(instr, "bad gather dimension numbers");
  }
  IndexReader ir(indices, dn.index_vector_dim);
  const int64_t nidx = static_cast<int64_t>(dn.start_index_map.size());
  if (dn.index_vector_dim < indices->shape().rank() && indices->shape().dim(dn.index_vector_dim) != nidx) {
    return KernelError(instr, "index vector length differs from start_index_map");
  }
  for (int64_t d : dn.start_index_map) if (d < 0 || d >= rank) return KernelError(instr, "bad start_index_map");
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] < 0 || sizes[d] > ps.dim(d)) return KernelError(instr, "slice size exceeds operand");
  }
  // Operand window dims (not collapsed, not batching) map to offset_dims in order.
  std::vector<int64_t> window_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(dn.collapsed_slice_dims, d) && !Contains(dn.operand_batching_dims, d)) window_dims.push_back(d);
  }
  std::vector<int64_t> out_batch_dims;
  for (int64_t d = 0; d < os.rank(); ++d) if (!Contains(dn.offset_dims, d)) out_batch_dims.push_back(d);
  if (window_dims.size() != dn.offset_dims.size() || out_batch_dims.size() != ir.batch_dims.size()) {
    return KernelError(instr, "offset_dims do not match the slice");
  }
  for (size_t i = 0; i < window_dims.size(); ++i) {
    if (dn.offset_dims[i] < 0 || dn.offset_dims[i] >= os.rank() || os.dim(dn.offset_dims[i]) != sizes[window_dims[i]]) {
      return KernelError(instr, "offset dim size differs from slice size");
    }
  }
  std::vector<int64_t> bsizes = ir.BatchSizes();
  for (size_t i = 0; i < bsizes.size(); ++i) {
    if (os.dim(out_batch_dims[i]) != bsizes[i]) return KernelError(instr, "batch dims differ from indices");
  }
  std::vector<int64_t> obatch_pos;  // for each operand batching dim, its position in batch index
  for (int64_t d : dn.start_indices_batching_dims) {
    const int64_t p = ir.BatchPos(d);
    if (p < 0) return KernelError(instr, "bad start_indices_batching_dims");
    obatch_pos.push_back(p);
  }
  for (int64_t d : dn.operand_batching_dims) if (d < 0 || d >= rank) return KernelError(instr, "bad operand_batching_dims");

  Value out = NewArray(os);
  const int64_t esz = PrimitiveByteSize(os.element_type());
  if (esz != PrimitiveByteSize(ps.element_type())) return KernelError(instr, "element type mismatch");
  const std::vector<int64_t> pstr = RowMajorStrides(ps.dims());
  const std::vector<int64_t> ostr = RowMajorStrides(os.dims());
  std::vector<int64_t> wsizes, wpstr, wostr;
  for (size_t i = 0; i < window_dims.size(); ++i) {
    wsizes.push_back(sizes[window_dims[i]]);
    wpstr.push_back(pstr[window_dims[i]]);
    wostr.push_back(ostr[dn.offset_dims[i]]);
  }
  const int64_t nbatch = Product(bsizes), nwin = Product(wsizes);
  const uint8_t* src = operand->data();
  uint8_t* dst = out.array->data();
  KernelParallelFor(ctx, nbatch, std::max<int64_t>(1, 4096 / std::max<int64_t>(nwin, 1)), [&](int64_t b, int64_t e) {
    std::vector<int64_t> g(bsizes.size()), start(rank), wi(wsizes.size());
    for (int64_t bi = b; bi < e; ++bi) {
      int64_t lin = bi;
      for (int64_t i = static_cast<int64_t>(g.size()) - 1; i >= 0; --i) {
        g[i] = lin % bsizes[i];
        lin /= bsizes[i];
      }
      std::fill(start.begin(), start.end(), 0);
      const int64_t base = ir.BaseOffset(g);
      for (int64_t k = 0; k < nidx; ++k) start[dn.start_index_map[k]] = ir.Component(base, k);
      for (int64_t d = 0; d < rank; ++d) start[d] = std::clamp<int64_t>(start[d], 0, ps.dim(d) - sizes[d]);
      for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) start[dn.operand_batching_dims[i]] = g[obatch_pos[i]];
      int64_t pbase = 0, obase = 0;
      for (int64_t d = 0; d < rank; ++d) pbase += start[d] * pstr[d];
      for (size_t i = 0; i < g.size(); ++i) obase += g[i] * ostr[out_batch_dims[i]];
      std::fill(wi.begin(), wi.end(), 0);
      int64_t poff = pbase, ooff = obase;
      for (int64_t n = 0; n < nwin; ++n) {
        std::memcpy(dst + ooff * esz, src + poff * esz, esz);
        for (int64_t d = static_cast<int64_t>(wi.size()) - 1; d >= 0; --d) {
          poff += wpstr[d];
          ooff += wostr[d];
          if (++wi[d] < wsizes[d]) break;
          poff -= wpstr[d] * wsizes[d];
          ooff -= wostr[d] * wsizes[d];
          wi[d] = 0;
        }
      }
    }
  });
  return out;
}

absl::StatusOr<Value> ScatterKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                    KernelContext& ctx) {
  if (operands.size() < 3 || operands.size() % 2 != 1) {
    return KernelError(instr, "scatter needs N operands, indices and N updates");
  }
  const size_t n = (operands.size() - 1) / 2;
  std::vector<const Buffer*> ops(n), upd(n);
  for (size_t i = 0; i < n; ++i) {
    HLOX_ASSIGN_OR_RETURN(ops[i], ArrayOperand(instr, operands, i));
    HLOX_ASSIGN_OR_RETURN(upd[i], ArrayOperand(instr, operands, n + 1 + i));
  }
  HLOX_ASSIGN_OR_RETURN(const Buffer* indices, ArrayOperand(instr, operands, n));
  if (!instr.attrs().scatter.has_value()) return KernelError(instr, "missing scatter dimension numbers");
  const ScatterDimensionNumbers& dn = *instr.attrs().scatter;
  const Shape& ps = ops[0]->shape();
  const Shape& us = upd[0]->shape();
  const int64_t rank = ps.rank();
  for (size_t i = 0; i < n; ++i) {
    if (ops[i]->shape().dims() != ps.dims() || upd[i]->shape().dims() != us.dims()) {
      return KernelError(instr, "variadic operands/updates must share dims");
    }
  }
  if (dn.index_vector_dim < 0 || dn.index_vector_dim > indices->shape().rank() ||
      dn.input_batching_dims.size() != dn.scatter_indices_batching_dims.size()) {
    return KernelError(instr, "bad scatter dimension numbers");
  }
  IndexReader ir(indices, dn.index_vector_dim);
  const int64_t nidx = static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size());
  if (dn.index_vector_dim < indices->shape().rank() && indices->shape().dim(dn.index_vector_dim) != nidx) {
    return KernelError(instr, "index vector length differs from scatter_dims_to_operand_dims");
  }
  for (int64_t d : dn.scatter_dims_to_operand_dims) if (d < 0 || d >= rank) return KernelError(instr, "bad scatter_dims_to_operand_dims");
  for (int64_t d : dn.input_batching_dims) if (d < 0 || d >= rank) return KernelError(instr, "bad input_batching_dims");
  std::vector<int64_t> window_dims;  // operand dims covered by update_window_dims, in order
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(dn.inserted_window_dims, d) && !Contains(dn.input_batching_dims, d)) window_dims.push_back(d);
  }
  std::vector<int64_t> upd_scatter_dims;
  for (int64_t d = 0; d < us.rank(); ++d) if (!Contains(dn.update_window_dims, d)) upd_scatter_dims.push_back(d);
  if (window_dims.size() != dn.update_window_dims.size() || upd_scatter_dims.size() != ir.batch_dims.size()) {
    return KernelError(instr, "update_window_dims do not match operand and updates");
  }
  std::vector<int64_t> bsizes = ir.BatchSizes();
  for (size_t i = 0; i < bsizes.size(); ++i) {
    if (us.dim(upd_scatter_dims[i]) != bsizes[i]) return KernelError(instr, "update scatter dims differ from indices");
  }
  std::vector<int64_t> wsize(rank, 1);
  for (size_t i = 0; i < window_dims.size(); ++i) {
    if (dn.update_window_dims[i] < 0 || dn.update_window_dims[i] >= us.rank()) return KernelError(instr, "bad update_window_dims");
    wsize[window_dims[i]] = us.dim(dn.update_window_dims[i]);
    if (wsize[window_dims[i]] > ps.dim(window_dims[i])) return KernelError(instr, "update window larger than operand");
  }
  std::vector<int64_t> ibatch_pos;
  for (int64_t d : dn.scatter_indices_batching_dims) {
    const int64_t p = ir.BatchPos(d);
    if (p < 0) return KernelError(instr, "bad scatter_indices_batching_dims");
    ibatch_pos.push_back(p);
  }
  std::vector<Value> outs;
  for (size_t i = 0; i < n; ++i) outs.push_back(CloneValue(*operands[i]));
  const Shape& os = instr.shape();
  const ScalarOp op = ClassifyBinary(instr.to_apply());
  const bool fast = n == 1 && op != ScalarOp::kOther && IsRealType(ps.element_type()) &&
                    ps.element_type() == us.element_type();
  const std::vector<int64_t> pstr = RowMajorStrides(ps.dims());
  const std::vector<int64_t> ustr = RowMajorStrides(us.dims());
  std::vector<int64_t> wsizes, wpstr, wustr;
  for (size_t i = 0; i < window_dims.size(); ++i) {
    wsizes.push_back(us.dim(dn.update_window_dims[i]));
    wpstr.push_back(pstr[window_dims[i]]);
    wustr.push_back(ustr[dn.update_window_dims[i]]);
  }
  const int64_t nbatch = Product(bsizes), nwin = Product(wsizes);
  std::optional<ScalarProgram> prog;
  if (!fast && instr.to_apply() != nullptr) {
    prog = ScalarProgram::Compile(*instr.to_apply());
    if (prog.has_value() && prog->result_count() != static_cast<int64_t>(n)) prog.reset();
  }
  std::vector<SVal> sargs(2 * n), sres(n), scratch;
  std::vector<int64_t> g(bsizes.size()), start(rank), wi(wsizes.size());
  for (int64_t bi = 0; bi < nbatch; ++bi) {
    int64_t lin = bi;
    for (int64_t i = static_cast<int64_t>(g.size()) - 1; i >= 0; --i) {
      g[i] = lin % bsizes[i];
      lin /= bsizes[i];
    }
    std::fill(start.begin(), start.end(), 0);
    const int64_t base = ir.BaseOffset(g);
    for (int64_t k = 0; k < nidx; ++k) start[dn.scatter_dims_to_operand_dims[k]] = ir.Component(base, k);
    for (size_t i = 0; i < dn.input_batching_dims.size(); ++i) start[dn.input_batching_dims[i]] = g[ibatch_pos[i]];
    bool in_bounds = true;
    for (int64_t d = 0; d < rank; ++d) {
      if (start[d] < 0 || start[d] > ps.dim(d) - wsize[d]) in_bounds = false;
    }
    if (!in_bounds || nwin == 0) continue;
    int64_t poff = 0, uoff = 0;
    for (int64_t d = 0; d < rank; ++d) poff += start[d] * pstr[d];
    for (size_t i = 0; i < g.size(); ++i) uoff += g[i] * ustr[upd_scatter_dims[i]];
    std::fill(wi.begin(), wi.end(), 0);
    for (int64_t w = 0; w < nwin; ++w) {
      if (fast) {
        Buffer& ob = *outs[0].array;
        if (op == ScalarOp::kAssignSecond) {
          const int64_t sz = PrimitiveByteSize(ps.element_type());
          std::memcpy(ob.data() + poff * sz, upd[0]->data() + uoff * sz, sz);
        } else {
          StoreDouble(ob, poff, ApplyScalarOp(op, LoadDouble(ob, poff), LoadDouble(*upd[0], uoff)));
        }
      } else if (prog.has_value()) {
        for (size_t i = 0; i < n; ++i) {
          sargs[i] = LoadSVal(*outs[i].array, poff);
          sargs[n + i] = LoadSVal(*upd[i], uoff);
        }
        prog->Run(sargs.data(), sres.data(), scratch);
        for (size_t i = 0; i < n; ++i) StoreSVal(*outs[i].array, poff, sres[i]);
      } else {
        if (instr.to_apply() == nullptr) return KernelError(instr, "missing to_apply");
        std::vector<Value> args;
        for (size_t i = 0; i < n; ++i) args.push_back(ElementValue(*outs[i].array, poff));
        for (size_t i = 0; i < n; ++i) args.push_back(ElementValue(*upd[i], uoff));
        HLOX_ASSIGN_OR_RETURN(auto r, CallComputation(ctx, *instr.to_apply(), args));
        if (r.size() != n) return KernelError(instr, "update computation returned the wrong arity");
        for (size_t i = 0; i < n; ++i) {
          const int64_t sz = PrimitiveByteSize(outs[i].array->shape().element_type());
          std::memcpy(outs[i].array->data() + poff * sz, r[i]->data(), sz);
        }
      }
      for (int64_t d = static_cast<int64_t>(wi.size()) - 1; d >= 0; --d) {
        poff += wpstr[d];
        uoff += wustr[d];
        if (++wi[d] < wsizes[d]) break;
        poff -= wpstr[d] * wsizes[d];
        uoff -= wustr[d] * wsizes[d];
        wi[d] = 0;
      }
    }
  }
  if (!os.IsTuple()) return outs[0];
  return Value::Tuple(std::move(outs));
}

}  // namespace hlox::rt
