// reduce-window (variadic, any reducer, padding, base/window dilation, strides) and
// select-and-scatter. Padding and base-dilation holes are skipped, as XLA's evaluator does:
// each output starts from the init value and folds in only real input elements, in row-major
// window order. Scalar add/multiply/max/min/and/or reducers take a typed fast path (f16/bf16
// accumulate in f32 and round once); anything else calls the reducer computation through the
// executor element by element.
#include <cmath>
#include <vector>

#include "runtime/kernels/scalar_access.h"
#include "runtime/kernels/scalar_program.h"

namespace hlox::rt {
namespace {

// For each dim, table[d][o * size + w] = input index read by output o at window offset w, or -1.
struct WindowTables {
  std::vector<std::vector<int64_t>> pos;
  std::vector<int64_t> size, out_dims, in_strides;
  int64_t window_count = 1;
};

absl::StatusOr<WindowTables> BuildTables(const Instruction& instr, const Shape& in,
                                         const std::vector<int64_t>& out_dims) {
  const int64_t rank = in.rank();
  static const Window kNoWindow;  // no window= is the empty window of a scalar operand
  const Window& window = instr.attrs().window ? *instr.attrs().window : kNoWindow;
  if (static_cast<int64_t>(window.dims.size()) != rank || static_cast<int64_t>(out_dims.size()) != rank) {
    return KernelError(instr, "window rank does not match the operand rank");
  }
  WindowTables t;
  t.out_dims = out_dims;
  t.in_strides = RowMajorStrides(in.dims());
  t.pos.resize(rank);
  for (int64_t d = 0; d < rank; ++d) {
    const WindowDimension& w = window.dims[d];
    if (w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1 || w.size < 0) {
      return KernelError(instr, "bad window dimension");
    }
    const int64_t dilated = in.dim(d) == 0 ? 0 : (in.dim(d) - 1) * w.base_dilation + 1;
    t.size.push_back(w.size);
    t.window_count *= w.size;
    t.pos[d].assign(out_dims[d] * w.size, -1);
    for (int64_t o = 0; o < out_dims[d]; ++o) {
      for (int64_t k = 0; k < w.size; ++k) {
        const int64_t wk = w.reversal ? w.size - 1 - k : k;
        const int64_t p = o * w.stride - w.pad_low + wk * w.window_dilation;
        if (p >= 0 && p < dilated && p % w.base_dilation == 0) t.pos[d][o * w.size + k] = p / w.base_dilation;
      }
    }
  }
  return t;
}

// Calls fn(input_linear_index) for every real input element in the window of output `out_lin`.
template <typename F>
void ForEachInWindow(const WindowTables& t, int64_t out_lin, std::vector<int64_t>& oi,
                     std::vector<int64_t>& wi, F&& fn) {
  const int64_t rank = static_cast<int64_t>(t.size.size());
  for (int64_t d = rank - 1; d >= 0; --d) {
    oi[d] = out_lin % t.out_dims[d];
    out_lin /= t.out_dims[d];
  }
  std::fill(wi.begin(), wi.end(), 0);
  for (int64_t n = 0; n < t.window_count; ++n) {
    int64_t off = 0;
    bool valid = true;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t p = t.pos[d][oi[d] * t.size[d] + wi[d]];
      if (p < 0) {
        valid = false;
        break;
      }
      off += p * t.in_strides[d];
    }
    if (valid) fn(off);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++wi[d] < t.size[d]) break;
      wi[d] = 0;
    }
  }
}

template <typename C>
C Apply(ScalarOp op, C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if ((op == ScalarOp::kMax || op == ScalarOp::kMin) && (std::isnan(a) || std::isnan(b))) {
      return std::numeric_limits<C>::quiet_NaN();
    }
  }
  switch (op) {
    case ScalarOp::kAdd: return static_cast<C>(a + b);
    case ScalarOp::kMul: return static_cast<C>(a * b);
    case ScalarOp::kMax: return a > b ? a : b;
    case ScalarOp::kMin: return a < b ? a : b;
    case ScalarOp::kAnd:
      if constexpr (std::is_floating_point_v<C>) return (a != 0 && b != 0) ? C(1) : C(0);
      else return static_cast<C>(a & b);
    case ScalarOp::kOr:
      if constexpr (std::is_floating_point_v<C>) return (a != 0 || b != 0) ? C(1) : C(0);
      else return static_cast<C>(a | b);
    case ScalarOp::kAssignSecond: return b;
    default: return a;
  }
}

absl::StatusOr<Value> FastReduceWindow(const Buffer& in, const Buffer& init, ScalarOp op,
                                       const WindowTables& t, const Shape& out_shape,
                                       KernelContext& ctx) {
  Value out = NewArray(out_shape);
  Buffer& ob = *out.array;
  absl::Status st = DispatchType(in.shape().element_type(), "reduce-window", [&](auto tag) -> absl::Status {
    using Tr = typename decltype(tag)::Traits;
    using St = typename Tr::Storage;
    using C = typename Tr::Compute;
    if constexpr (!std::is_arithmetic_v<C>) {
      return absl::UnimplementedError("reduce-window fast path: complex types");
    } else {
    if constexpr (std::is_same_v<C, bool>) {
      op = op == ScalarOp::kAdd ? ScalarOp::kOr : op == ScalarOp::kMul ? ScalarOp::kAnd : op;
    }
    const St* src = in.as<St>();
    St* dst = ob.as<St>();
    const C init_v = Tr::Load(init.as<St>()[0]);
    const int64_t rank = static_cast<int64_t>(t.size.size());
    const int64_t count = ob.element_count();
    // `op` as a compile-time constant in the hot loop (tag = std::integral_constant).
    auto fold_as = [](auto tag, C acc, C v) -> C {
      if constexpr (std::is_same_v<C, bool>) {
        return Apply<int>(decltype(tag)::value, acc, v) != 0;
      } else {
        return Apply<C>(decltype(tag)::value, acc, v);
      }
    };
    auto fold = [&](C acc, C v) -> C {
      if constexpr (std::is_same_v<C, bool>) {
        return Apply<int>(op, acc, v) != 0;
      } else {
        return Apply<C>(op, acc, v);
      }
    };
    if (rank == 0 || t.window_count == 0) {
      std::vector<int64_t> oi(rank), wi(rank);
      for (int64_t o = 0; o < count; ++o) {
        C acc = init_v;
        ForEachInWindow(t, o, oi, wi, [&](int64_t off) { acc = fold(acc, Tr::Load(src[off])); });
        dst[o] = Tr::Store(acc);
      }
      return absl::OkStatus();
    }
    // Output rows (every dim but the last fixed): for each window position of the leading dims,
    // in row-major order, the whole row folds in its taps along the last dim. Each output still
    // folds its window in row-major window order, so the bits are those of one output at a time.
    const int64_t last = rank - 1, row_len = t.out_dims[last], taps = t.size[last];
    if (row_len == 0) return absl::OkStatus();
    const int64_t rows = count / row_len, lead_window = t.window_count / taps;
    const int64_t* last_pos = t.pos[last].data();
    const int64_t last_stride = t.in_strides[last];
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(row_len * t.window_count, 1));
    auto walk_rows = [&](auto fold_op) {
      KernelParallelFor(ctx, rows, grain, [&](int64_t b, int64_t e) {
        std::vector<int64_t> oi(rank), wi(rank);
        std::vector<C> acc(row_len);
        for (int64_t r = b; r < e; ++r) {
          int64_t rest = r;
          for (int64_t d = last - 1; d >= 0; --d) {
            oi[d] = rest % t.out_dims[d];
            rest /= t.out_dims[d];
          }
          std::fill(acc.begin(), acc.end(), init_v);
          std::fill(wi.begin(), wi.end(), 0);
          for (int64_t n = 0; n < lead_window; ++n) {
            int64_t off = 0;
            bool valid = true;
            for (int64_t d = 0; d < last && valid; ++d) {
              const int64_t p = t.pos[d][oi[d] * t.size[d] + wi[d]];
              valid = p >= 0;
              off += p * t.in_strides[d];
            }
            if (valid) {
              const St* row = src + off;
              for (int64_t o = 0; o < row_len; ++o) {
                const int64_t* tp = last_pos + o * taps;
                C a = acc[o];
                for (int64_t w = 0; w < taps; ++w) {
                  if (tp[w] >= 0) a = fold_op(a, Tr::Load(row[tp[w] * last_stride]));
                }
                acc[o] = a;
              }
            }
            for (int64_t d = last - 1; d >= 0; --d) {
              if (++wi[d] < t.size[d]) break;
              wi[d] = 0;
            }
          }
          St* out_row = dst + r * row_len;
          for (int64_t o = 0; o < row_len; ++o) out_row[o] = Tr::Store(acc[o]);
        }
      });
    };
    using Op = ScalarOp;
    switch (op) {
      case Op::kAdd: walk_rows([&](C a, C v) { return fold_as(std::integral_constant<Op, Op::kAdd>{}, a, v); }); break;
      case Op::kMul: walk_rows([&](C a, C v) { return fold_as(std::integral_constant<Op, Op::kMul>{}, a, v); }); break;
      case Op::kMax: walk_rows([&](C a, C v) { return fold_as(std::integral_constant<Op, Op::kMax>{}, a, v); }); break;
      case Op::kMin: walk_rows([&](C a, C v) { return fold_as(std::integral_constant<Op, Op::kMin>{}, a, v); }); break;
      default: walk_rows(fold); break;
    }
    return absl::OkStatus();
    }
  });
  if (!st.ok()) return st;
  return out;
}

}  // namespace

absl::StatusOr<Value> ReduceWindowKernel(const Instruction& instr,
                                         const std::vector<const Value*>& operands,
                                         KernelContext& ctx) {
  if (operands.size() % 2 != 0 || operands.empty()) {
    return KernelError(instr, "reduce-window needs N inputs and N init values");
  }
  const size_t n = operands.size() / 2;
  std::vector<const Buffer*> in(n), init(n);
  for (size_t i = 0; i < n; ++i) {
    HLOX_ASSIGN_OR_RETURN(in[i], ArrayOperand(instr, operands, i));
    HLOX_ASSIGN_OR_RETURN(init[i], ArrayOperand(instr, operands, n + i));
    if (in[i]->shape().dims() != in[0]->shape().dims() || init[i]->element_count() != 1) {
      return KernelError(instr, "inputs must share dims and init values must be scalars");
    }
  }
  const Shape& os = instr.shape();
  std::vector<Shape> out_shapes = os.IsTuple() ? os.tuple_shapes() : std::vector<Shape>{os};
  if (out_shapes.size() != n) return KernelError(instr, "result arity does not match inputs");
  HLOX_ASSIGN_OR_RETURN(WindowTables t, BuildTables(instr, in[0]->shape(), out_shapes[0].dims()));
  const Computation* reducer = instr.to_apply();
  const ScalarOp op = ClassifyBinary(reducer);
  if (n == 1 && !os.IsTuple() && op != ScalarOp::kOther && op != ScalarOp::kAssignFirst &&
      IsRealType(in[0]->shape().element_type()) &&
      os.element_type() == in[0]->shape().element_type() &&
      init[0]->shape().element_type() == os.element_type()) {
    return FastReduceWindow(*in[0], *init[0], op, t, os, ctx);
  }
  if (reducer == nullptr) return KernelError(instr, "missing to_apply");
  std::vector<Value> outs;
  for (const Shape& s : out_shapes) outs.push_back(NewArray(s));
  const int64_t rank = in[0]->shape().rank();
  std::optional<ScalarProgram> prog = ScalarProgram::Compile(*reducer);
  if (prog.has_value() && prog->result_count() == static_cast<int64_t>(n)) {
    // Interpreted reducer: independent outputs in parallel.
    KernelParallelFor(ctx, out_shapes[0].ElementCount(), 64, [&](int64_t b, int64_t e) {
      std::vector<int64_t> oi2(rank), wi2(rank);
      std::vector<SVal> args(2 * n), acc(n), scratch;
      for (int64_t o = b; o < e; ++o) {
        for (size_t i = 0; i < n; ++i) acc[i] = LoadSVal(*init[i], 0);
        ForEachInWindow(t, o, oi2, wi2, [&](int64_t off) {
          for (size_t i = 0; i < n; ++i) {
            args[i] = acc[i];
            args[n + i] = LoadSVal(*in[i], off);
          }
          prog->Run(args.data(), acc.data(), scratch);
        });
        for (size_t i = 0; i < n; ++i) StoreSVal(*outs[i].array, o, acc[i]);
      }
    });
    if (!os.IsTuple()) return outs[0];
    return Value::Tuple(std::move(outs));
  }
  std::vector<int64_t> oi(rank), wi(rank);
  const int64_t count = out_shapes[0].ElementCount();
  for (int64_t o = 0; o < count; ++o) {
    std::vector<Value> acc;
    for (size_t i = 0; i < n; ++i) acc.push_back(ElementValue(*init[i], 0));
    absl::Status st;
    ForEachInWindow(t, o, oi, wi, [&](int64_t off) {
      if (!st.ok()) return;
      std::vector<Value> args = acc;
      for (size_t i = 0; i < n; ++i) args.push_back(ElementValue(*in[i], off));
      auto r = CallComputation(ctx, *reducer, args);
      if (!r.ok()) {
        st = r.status();
        return;
      }
      if (r->size() != n) {
        st = KernelError(instr, "reducer returned the wrong number of values");
        return;
      }
      for (size_t i = 0; i < n; ++i) acc[i] = Value::Array((*r)[i]);
    });
    HLOX_RETURN_IF_ERROR(st);
    for (size_t i = 0; i < n; ++i) {
      const int64_t sz = PrimitiveByteSize(out_shapes[i].element_type());
      std::memcpy(outs[i].array->data() + o * sz, acc[i].array->data(), sz);
    }
  }
  if (!os.IsTuple()) return outs[0];
  return Value::Tuple(std::move(outs));
}

absl::StatusOr<Value> SelectAndScatterKernel(const Instruction& instr,
                                             const std::vector<const Value*>& operands,
                                             KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* operand, ArrayOperand(instr, operands, 0));
  HLOX_ASSIGN_OR_RETURN(const Buffer* source, ArrayOperand(instr, operands, 1));
  HLOX_ASSIGN_OR_RETURN(const Buffer* init, ArrayOperand(instr, operands, 2));
  if (instr.called_computations().size() < 2) return KernelError(instr, "needs select and scatter");
  const Computation* select = instr.called_computations()[0];
  const Computation* scatter = instr.called_computations()[1];
  HLOX_ASSIGN_OR_RETURN(WindowTables t, BuildTables(instr, operand->shape(), source->shape().dims()));
  if (!instr.shape().IsArray() || instr.shape().dims() != operand->shape().dims() ||
      init->element_count() != 1 || !LoadsAsDouble(operand->shape().element_type()) ||
      !LoadsAsDouble(instr.shape().element_type())) {
    return KernelError(instr, "bad operand or result shapes");
  }
  // Fast select: root compare(p_a, p_b) with GE/GT/LE/LT.
  std::optional<ComparisonDirection> dir;
  bool swapped = false;
  if (select != nullptr && select->root() != nullptr && select->root()->opcode() == Opcode::kCompare &&
      select->root()->operand(0)->opcode() == Opcode::kParameter &&
      select->root()->operand(1)->opcode() == Opcode::kParameter &&
      select->root()->operand(0)->parameter_number() != select->root()->operand(1)->parameter_number()) {
    dir = select->root()->attrs().comparison;
    swapped = select->root()->operand(0)->parameter_number() == 1;
  }
  const ScalarOp sop = ClassifyBinary(scatter);
  Value out = NewArray(instr.shape());
  Buffer& ob = *out.array;
  const double init_v = LoadDouble(*init, 0);
  for (int64_t i = 0; i < ob.element_count(); ++i) StoreDouble(ob, i, init_v);
  const int64_t rank = operand->shape().rank();
  std::vector<int64_t> oi(rank), wi(rank);
  for (int64_t s = 0; s < source->element_count(); ++s) {
    int64_t selected = -1;
    absl::Status st;
    ForEachInWindow(t, s, oi, wi, [&](int64_t off) {
      if (!st.ok()) return;
      if (selected < 0) {
        selected = off;
        return;
      }
      bool keep;
      if (dir.has_value()) {
        double a = LoadDouble(*operand, selected), b = LoadDouble(*operand, off);
        if (swapped) std::swap(a, b);
        switch (*dir) {
          case ComparisonDirection::kGe: keep = a >= b; break;
          case ComparisonDirection::kGt: keep = a > b; break;
          case ComparisonDirection::kLe: keep = a <= b; break;
          case ComparisonDirection::kLt: keep = a < b; break;
          case ComparisonDirection::kEq: keep = a == b; break;
          default: keep = a != b; break;
        }
      } else {
        if (select == nullptr) {
          st = KernelError(instr, "missing select computation");
          return;
        }
        auto r = CallComputation(ctx, *select, {ElementValue(*operand, selected), ElementValue(*operand, off)});
        if (!r.ok() || r->empty()) {
          st = r.ok() ? KernelError(instr, "select returned nothing") : r.status();
          return;
        }
        keep = LoadDouble(*(*r)[0], 0) != 0;
      }
      if (!keep) selected = off;
    });
    HLOX_RETURN_IF_ERROR(st);
    if (selected < 0) continue;
    if (sop != ScalarOp::kOther) {
      StoreDouble(ob, selected, ApplyScalarOp(sop, LoadDouble(ob, selected), LoadDouble(*source, s)));
      continue;
    }
    if (scatter == nullptr) return KernelError(instr, "missing scatter computation");
    HLOX_ASSIGN_OR_RETURN(auto r, CallComputation(ctx, *scatter, {ElementValue(ob, selected), ElementValue(*source, s)}));
    if (r.empty()) return KernelError(instr, "scatter returned nothing");
    const int64_t sz = PrimitiveByteSize(ob.shape().element_type());
    std::memcpy(ob.data() + selected * sz, r[0]->data(), sz);
  }
  return out;
}

}  // namespace hlox::rt
