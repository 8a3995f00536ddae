// Shape inference rules, one function per operation family. Semantics follow XLA's operation
// semantics documentation; each rule checks what the operands and attributes require.
#include "ir/shape_inference.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "ir/computation.h"

namespace hlox {
namespace {

absl::Status Bad(const Instruction&, const std::string& why) {
  return absl::InvalidArgumentError(why);
}

std::string Dims(const std::vector<int64_t>& d) { return absl::StrCat("[", absl::StrJoin(d, ","), "]"); }

Shape Array(PrimitiveType t, std::vector<int64_t> dims) { return Shape(t, std::move(dims)); }

bool ValidDim(int64_t d, int64_t rank) { return d >= 0 && d < rank; }

absl::Status CheckDimList(const Instruction& instr, const std::vector<int64_t>& dims, int64_t rank,
                          const char* what) {
  std::vector<bool> seen(std::max<int64_t>(rank, 0), false);
  for (int64_t d : dims) {
    if (!ValidDim(d, rank)) return Bad(instr, absl::StrCat(what, " dimension ", d, " out of range for rank ", rank));
    if (seen[d]) return Bad(instr, absl::StrCat(what, " dimension ", d, " repeated"));
    seen[d] = true;
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferElementwise(const Instruction& instr) {
  const Shape& declared = instr.shape();
  if (instr.operand_count() == 0) return Bad(instr, "elementwise op without operands");
  // The first non-scalar operand fixes the dims (select/clamp allow scalar pred/bounds).
  const Shape* ref = &instr.operand(0)->shape();
  for (Instruction* op : instr.operands()) {
    if (!op->shape().IsArray()) return Bad(instr, "elementwise operand is not an array");
    if (op->shape().rank() > 0) {
      ref = &op->shape();
      break;
    }
  }
  if (instr.opcode() == Opcode::kSelect || instr.opcode() == Opcode::kClamp) {
    // select(pred, on_true, on_false): result follows on_true; clamp(min, x, max) follows x.
    ref = &instr.operand(1)->shape();
  }
  for (Instruction* op : instr.operands()) {
    const Shape& s = op->shape();
    bool scalar_ok = (instr.opcode() == Opcode::kSelect && op == instr.operand(0)) ||
                     (instr.opcode() == Opcode::kClamp && op != instr.operand(1));
    if (s.dims() != ref->dims() && !(scalar_ok && s.rank() == 0)) {
      return Bad(instr, absl::StrCat("operand dims ", Dims(s.dims()), " differ from ", Dims(ref->dims())));
    }
  }
  PrimitiveType t = ref->element_type();
  switch (instr.opcode()) {
    case Opcode::kCompare:
    case Opcode::kIsFinite: t = PrimitiveType::kPred; break;
    case Opcode::kConvert:
    case Opcode::kReal:
    case Opcode::kImag:
    case Opcode::kComplex:
    case Opcode::kAbs: t = declared.element_type(); break;  // chosen by the text
    case Opcode::kMulhi:
      if (!IsInteger(t) || instr.operand(1)->shape().element_type() != t) {
        return Bad(instr, "mulhi takes two integer operands of one type");
      }
      break;
    case Opcode::kSelect:
      if (instr.operand(0)->shape().element_type() != PrimitiveType::kPred) {
        return Bad(instr, "select predicate is not pred");
      }
      if (instr.operand(1)->shape().element_type() != instr.operand(2)->shape().element_type()) {
        return Bad(instr, "select branches have different element types");
      }
      break;
    default:
      for (Instruction* op : instr.operands()) {
        if (op->shape().element_type() != t) {
          return Bad(instr, absl::StrCat("operand element types differ: ",
                                         std::string(PrimitiveTypeName(op->shape().element_type())), " vs ",
                                         std::string(PrimitiveTypeName(t))));
        }
      }
  }
  return Array(t, ref->dims());
}

absl::StatusOr<Shape> InferDot(const Instruction& instr) {
  const Shape& l = instr.operand(0)->shape();
  const Shape& r = instr.operand(1)->shape();
  // No dimension numbers means none (XLA's parser default): an outer product.
  const DotDimensionNumbers d = instr.attrs().dot.value_or(DotDimensionNumbers{});
  HLOX_RETURN_IF_ERROR(CheckDimList(instr, d.lhs_batch, l.rank(), "lhs batch"));
  HLOX_RETURN_IF_ERROR(CheckDimList(instr, d.rhs_batch, r.rank(), "rhs batch"));
  HLOX_RETURN_IF_ERROR(CheckDimList(instr, d.lhs_contracting, l.rank(), "lhs contracting"));
  HLOX_RETURN_IF_ERROR(CheckDimList(instr, d.rhs_contracting, r.rank(), "rhs contracting"));
  if (d.lhs_batch.size() != d.rhs_batch.size() || d.lhs_contracting.size() != d.rhs_contracting.size()) {
    return Bad(instr, "dot batch/contracting dimension counts differ between lhs and rhs");
  }
  for (size_t i = 0; i < d.lhs_batch.size(); ++i) {
    if (l.dim(d.lhs_batch[i]) != r.dim(d.rhs_batch[i])) return Bad(instr, "dot batch dimension sizes differ");
  }
  for (size_t i = 0; i < d.lhs_contracting.size(); ++i) {
    if (l.dim(d.lhs_contracting[i]) != r.dim(d.rhs_contracting[i])) {
      return Bad(instr, "dot contracting dimension sizes differ");
    }
  }
  std::vector<int64_t> dims;
  for (int64_t b : d.lhs_batch) dims.push_back(l.dim(b));
  auto free_dims = [&](const Shape& s, const std::vector<int64_t>& batch, const std::vector<int64_t>& con) {
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (std::find(batch.begin(), batch.end(), i) == batch.end() &&
          std::find(con.begin(), con.end(), i) == con.end()) {
        dims.push_back(s.dim(i));
      }
    }
  };
  free_dims(l, d.lhs_batch, d.lhs_contracting);
  free_dims(r, d.rhs_batch, d.rhs_contracting);
  return Array(instr.shape().element_type(), dims);
}

// Output size of one windowed dimension (reduce-window and convolution).
int64_t WindowedSize(int64_t in, const WindowDimension& w) {
  int64_t dilated_in = in == 0 ? 0 : (in - 1) * w.base_dilation + 1;
  int64_t padded = dilated_in + w.pad_low + w.pad_high;
  int64_t dilated_win = (w.size - 1) * w.window_dilation + 1;
  if (padded < dilated_win) return 0;
  return (padded - dilated_win) / w.stride + 1;
}

absl::StatusOr<Shape> InferConvolution(const Instruction& instr) {
  const Shape& in = instr.operand(0)->shape();
  const Shape& k = instr.operand(1)->shape();
  if (!instr.attrs().conv) return Bad(instr, "convolution without dim_labels");
  const ConvDimensionNumbers& c = *instr.attrs().conv;
  size_t ns = c.input_spatial.size();
  if (c.kernel_spatial.size() != ns || c.output_spatial.size() != ns ||
      in.rank() != static_cast<int64_t>(ns) + 2 || k.rank() != static_cast<int64_t>(ns) + 2) {
    return Bad(instr, "convolution dim_labels do not match operand ranks");
  }
  Window window;
  if (instr.attrs().window) window = *instr.attrs().window;
  if (window.dims.empty()) window.dims.resize(ns);
  if (window.dims.size() != ns) return Bad(instr, "convolution window rank differs from spatial dims");
  int64_t fgc = instr.attrs().feature_group_count, bgc = instr.attrs().batch_group_count;
  if (fgc < 1 || bgc < 1) return Bad(instr, "group counts must be positive");
  if (in.dim(c.input_feature) != k.dim(c.kernel_input_feature) * fgc) {
    return Bad(instr, absl::StrCat("input feature size ", in.dim(c.input_feature), " != kernel input feature ",
                                   k.dim(c.kernel_input_feature), " x feature_group_count ", fgc));
  }
  if (in.dim(c.input_batch) % bgc != 0) return Bad(instr, "batch not divisible by batch_group_count");
  std::vector<int64_t> dims(ns + 2);
  dims[c.output_batch] = in.dim(c.input_batch) / bgc;
  dims[c.output_feature] = k.dim(c.kernel_output_feature);
  for (size_t i = 0; i < ns; ++i) {
    if (window.dims[i].size != k.dim(c.kernel_spatial[i])) {
      return Bad(instr, "window size differs from kernel spatial size");
    }
    dims[c.output_spatial[i]] = WindowedSize(in.dim(c.input_spatial[i]), window.dims[i]);
  }
  return Array(instr.shape().element_type(), dims);
}

// Operand shapes of variadic reduce-like ops: N inputs then N init values.
absl::StatusOr<Shape> InferReduce(const Instruction& instr) {
  int64_t n = instr.operand_count() / 2;
  if (n == 0 || instr.operand_count() % 2 != 0) return Bad(instr, "reduce needs N inputs and N init values");
  const Shape& in0 = instr.operand(0)->shape();
  HLOX_RETURN_IF_ERROR(CheckDimList(instr, instr.dimensions(), in0.rank(), "reduce"));
  std::vector<Shape> results;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& in = instr.operand(i)->shape();
    if (in.dims() != in0.dims()) return Bad(instr, "reduce inputs have different dims");
    if (instr.operand(n + i)->shape().rank() != 0) return Bad(instr, "reduce init value is not a scalar");
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < in.rank(); ++d) {
      if (std::find(instr.dimensions().begin(), instr.dimensions().end(), d) == instr.dimensions().end()) {
        dims.push_back(in.dim(d));
      }
    }
    results.push_back(Array(instr.operand(n + i)->shape().element_type(), dims));
  }
  return n == 1 ? results[0] : Shape::Tuple(results);
}

absl::StatusOr<Shape> InferReduceWindow(const Instruction& instr) {
  int64_t n = instr.operand_count() / 2;
  if (n == 0 || instr.operand_count() % 2 != 0) return Bad(instr, "reduce-window needs N inputs and N inits");
  // No window= is the empty window, which only a scalar operand has (XLA's rank-0 form).
  static const Window kNoWindow;
  const Window& w = instr.attrs().window ? *instr.attrs().window : kNoWindow;
  std::vector<Shape> results;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& in = instr.operand(i)->shape();
    if (static_cast<int64_t>(w.dims.size()) != in.rank()) return Bad(instr, "window rank differs from operand rank");
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < in.rank(); ++d) dims.push_back(WindowedSize(in.dim(d), w.dims[d]));
    results.push_back(Array(instr.operand(n + i)->shape().element_type(), dims));
  }
  return n == 1 ? results[0] : Shape::Tuple(results);
}

absl::StatusOr<Shape> InferGather(const Instruction& instr) {
  const Shape& operand = instr.operand(0)->shape();
  const Shape& idx = instr.operand(1)->shape();
  if (!instr.attrs().gather) return Bad(instr, "gather without dimension numbers");
  const GatherDimensionNumbers& g = *instr.attrs().gather;
  const std::vector<int64_t>& sizes = instr.attrs().gather_slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != operand.rank()) return Bad(instr, "slice_sizes rank differs from operand rank");
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (sizes[d] < 0 || sizes[d] > operand.dim(d)) return Bad(instr, "gather slice size out of range");
  }
  if (g.index_vector_dim < 0 || g.index_vector_dim > idx.rank()) return Bad(instr, "index_vector_dim out of range");
  std::vector<int64_t> batch;
  for (int64_t d = 0; d < idx.rank(); ++d) {
    if (d != g.index_vector_dim) batch.push_back(idx.dim(d));
  }
  std::vector<int64_t> offsets;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    bool collapsed = std::count(g.collapsed_slice_dims.begin(), g.collapsed_slice_dims.end(), d) ||
                     std::count(g.operand_batching_dims.begin(), g.operand_batching_dims.end(), d);
    if (!collapsed) offsets.push_back(sizes[d]);
  }
  if (offsets.size() != g.offset_dims.size()) return Bad(instr, "offset_dims count differs from uncollapsed slice dims");
  int64_t rank = static_cast<int64_t>(batch.size() + offsets.size());
  HLOX_RETURN_IF_ERROR(CheckDimList(instr, g.offset_dims, rank, "offset"));
  std::vector<int64_t> dims(rank);
  size_t bi = 0, oi = 0;
  for (int64_t d = 0; d < rank; ++d) {
    bool is_offset = std::count(g.offset_dims.begin(), g.offset_dims.end(), d) > 0;
    dims[d] = is_offset ? offsets[oi++] : batch[bi++];
  }
  return Array(operand.element_type(), dims);
}

absl::StatusOr<Shape> InferPad(const Instruction& instr) {
  const Shape& in = instr.operand(0)->shape();
  const auto& p = instr.attrs().padding;
  if (static_cast<int64_t>(p.size()) != in.rank()) return Bad(instr, "padding rank differs from operand rank");
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < in.rank(); ++d) {
    int64_t n = in.dim(d);
    if (p[d].interior < 0) return Bad(instr, "negative interior padding");
    int64_t size = n + p[d].low + p[d].high + std::max<int64_t>(n - 1, 0) * p[d].interior;
    if (size < 0) return Bad(instr, "padding makes a dimension negative");
    dims.push_back(size);
  }
  return Array(in.element_type(), dims);
}

absl::StatusOr<Shape> InferSlice(const Instruction& instr) {
  const Shape& in = instr.operand(0)->shape();
  const auto& s = instr.attrs().slice;
  if (static_cast<int64_t>(s.size()) != in.rank()) return Bad(instr, "slice rank differs from operand rank");
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (s[d].start < 0 || s[d].limit > in.dim(d) || s[d].start > s[d].limit || s[d].stride < 1) {
      return Bad(instr, absl::StrCat("slice [", s[d].start, ":", s[d].limit, ":", s[d].stride,
                                     "] invalid for dimension of size ", in.dim(d)));
    }
    dims.push_back((s[d].limit - s[d].start + s[d].stride - 1) / s[d].stride);
  }
  return Array(in.element_type(), dims);
}

absl::StatusOr<Shape> InferConcatenate(const Instruction& instr) {
  if (instr.operand_count() == 0 || instr.dimensions().size() != 1) return Bad(instr, "concatenate needs operands and one dimension");
  int64_t cd = instr.dimensions()[0];
  std::vector<int64_t> dims = instr.operand(0)->shape().dims();
  if (!ValidDim(cd, static_cast<int64_t>(dims.size()))) return Bad(instr, "concatenate dimension out of range");
  dims[cd] = 0;
  for (Instruction* op : instr.operands()) {
    const Shape& s = op->shape();
    if (s.rank() != static_cast<int64_t>(dims.size())) return Bad(instr, "concatenate operands differ in rank");
    for (int64_t d = 0; d < s.rank(); ++d) {
      if (d != cd && s.dim(d) != dims[d]) return Bad(instr, "concatenate operands differ outside the dimension");
    }
    dims[cd] += s.dim(cd);
  }
  return Array(instr.operand(0)->shape().element_type(), dims);
}

}  // namespace

absl::StatusOr<Shape> InferInstructionShapeImpl2(const Instruction& instr);

absl::StatusOr<Shape> InferInstructionShape(const Instruction& instr) {
  if (instr.IsElementwise() && instr.opcode() != Opcode::kCopy) return InferElementwise(instr);
  switch (instr.opcode()) {
    case Opcode::kDot: return InferDot(instr);
    case Opcode::kConvolution: return InferConvolution(instr);
    case Opcode::kReduce: return InferReduce(instr);
    case Opcode::kReduceWindow: return InferReduceWindow(instr);
    case Opcode::kGather: return InferGather(instr);
    case Opcode::kPad: return InferPad(instr);
    case Opcode::kSlice: return InferSlice(instr);
    case Opcode::kConcatenate: return InferConcatenate(instr);
    default: return InferInstructionShapeImpl2(instr);
  }
}

}  // namespace hlox
