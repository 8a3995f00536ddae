// Loop nests of kernels from HLO (loop_nest.h): the loops of the kernel's core op and the index
// maps of the tensors it touches, propagated from the fusion root down to the fusion's
// parameters. The tilings and the line counts are in loop_nest.cc.
#include "cost/loop_nest.h"

#include <algorithm>

namespace hlox::sp {
namespace {

using Index = std::vector<DimIndex>;  // one per dim of the value it indexes

DimIndex LoopIndex(int loop) { return DimIndex{{{loop, 1}}, 0}; }

Index Scaled(const DimIndex& d, int64_t mul, int64_t add) {
  DimIndex out = d;
  for (IndexTerm& t : out.terms) t.coeff *= mul;
  out.offset = out.offset * mul + add;
  return {out};
}

// The walk from a kernel's root down to the tensors it reads.
class NestBuilder {
 public:
  NestBuilder(const Kernel& k, LoopNest& nest) : k_(k), nest_(nest) {}

  void Build() {
    const Instruction& i = *k_.instr;
    if (i.opcode() == Opcode::kFusion && i.to_apply() != nullptr) {
      BuildFusion(*i.to_apply());
    } else {
      BuildSingle(i);
    }
    Dedupe();
  }

 private:
  // ---- loops of a core op, and its operands' index maps ----

  // Loops over `shape`'s dims (outer: dim 0) with the given reduction flags; returns the first.
  int AddLoops(const std::vector<int64_t>& dims, const std::vector<bool>& reduction) {
    const int first = static_cast<int>(nest_.loops.size());
    for (size_t d = 0; d < dims.size(); ++d) nest_.loops.push_back({std::max<int64_t>(1, dims[d]), 1, reduction[d]});
    return first;
  }

  // Sets up the loops of `core` and returns the index of its result (one DimIndex per result
  // dim); the index maps of its operands go to operand_index_ (empty: an operand is opaque).
  Index CoreLoops(const Instruction& core) {
    const Shape& out = core.shape();
    operand_index_.assign(core.operand_count(), std::nullopt);
    if (core.opcode() == Opcode::kDot && core.attrs().dot && core.operand_count() == 2) return DotLoops(core);
    if (core.opcode() == Opcode::kConvolution && core.attrs().conv && core.attrs().window &&
        core.operand_count() == 2 && core.attrs().batch_group_count == 1) {
      if (std::optional<Index> r = ConvLoops(core)) return *r;
    }
    if ((core.opcode() == Opcode::kReduce) && core.operand_count() >= 2 && core.operand(0)->shape().IsArray()) {
      return ReduceLoops(core);
    }
    if (core.opcode() == Opcode::kReduceWindow && core.attrs().window && core.operand_count() >= 2) {
      if (std::optional<Index> r = ReduceWindowLoops(core)) return *r;
    }
    const Shape& s = out.IsTuple() && out.tuple_size() > 0 ? out.tuple_shape(0) : out;
    std::vector<int64_t> dims = s.IsArray() ? s.dims() : std::vector<int64_t>{};
    const int first = AddLoops(dims, std::vector<bool>(dims.size(), false));
    Index idx;
    for (size_t d = 0; d < dims.size(); ++d) idx.push_back(LoopIndex(first + static_cast<int>(d)));
    core_is_root_map_ = true;  // operands follow the generic per-opcode maps
    return idx;
  }

  Index DotLoops(const Instruction& dot) {
    const DotDimensionNumbers& dn = *dot.attrs().dot;
    const Shape& l = dot.operand(0)->shape();
    const Shape& r = dot.operand(1)->shape();
    Index li(l.rank()), ri(r.rank()), out;
    auto contains = [](const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); };
    for (size_t b = 0; b < dn.lhs_batch.size(); ++b) {
      const int loop = AddLoops({l.dim(dn.lhs_batch[b])}, {false});
      li[dn.lhs_batch[b]] = LoopIndex(loop);
      ri[dn.rhs_batch[b]] = LoopIndex(loop);
      out.push_back(LoopIndex(loop));
    }
    for (int64_t d = 0; d < l.rank(); ++d) {
      if (contains(dn.lhs_batch, d) || contains(dn.lhs_contracting, d)) continue;
      const int loop = AddLoops({l.dim(d)}, {false});
      li[d] = LoopIndex(loop);
      out.push_back(LoopIndex(loop));
    }
    for (int64_t d = 0; d < r.rank(); ++d) {
      if (contains(dn.rhs_batch, d) || contains(dn.rhs_contracting, d)) continue;
      const int loop = AddLoops({r.dim(d)}, {false});
      ri[d] = LoopIndex(loop);
      out.push_back(LoopIndex(loop));
    }
    for (size_t c = 0; c < dn.lhs_contracting.size(); ++c) {
      const int loop = AddLoops({l.dim(dn.lhs_contracting[c])}, {true});
      li[dn.lhs_contracting[c]] = LoopIndex(loop);
      ri[dn.rhs_contracting[c]] = LoopIndex(loop);
    }
    operand_index_[0] = li;
    operand_index_[1] = ri;
    return out;
  }

  std::optional<Index> ConvLoops(const Instruction& conv) {
    const ConvDimensionNumbers& cd = *conv.attrs().conv;
    const Window& w = *conv.attrs().window;
    const Shape& in = conv.operand(0)->shape();
    const Shape& ker = conv.operand(1)->shape();
    const Shape& out = conv.shape();
    const size_t ns = cd.output_spatial.size();
    if (w.dims.size() != ns || cd.input_spatial.size() != ns || cd.kernel_spatial.size() != ns) return std::nullopt;
    for (const WindowDimension& wd : w.dims) {
      if (wd.base_dilation != 1) return std::nullopt;
    }
    const int64_t groups = std::max<int64_t>(1, conv.attrs().feature_group_count);
    const int64_t o = out.dim(cd.output_feature), i_per_group = ker.dim(cd.kernel_input_feature);
    if (o % groups != 0) return std::nullopt;
    Index ii(in.rank()), ki(ker.rank()), oi(out.rank());
    // Output dims in the output's order; the feature dim split into (group, feature in group).
    for (int64_t d = 0; d < out.rank(); ++d) {
      if (d == cd.output_feature) {
        const int g = AddLoops({groups}, {false});
        const int f = AddLoops({o / groups}, {false});
        oi[d] = DimIndex{{{g, o / groups}, {f, 1}}, 0};
        ki[cd.kernel_output_feature] = oi[d];
        ii[cd.input_feature] = DimIndex{{{g, i_per_group}}, 0};
      } else {
        const int loop = AddLoops({out.dim(d)}, {false});
        oi[d] = LoopIndex(loop);
        if (d == cd.output_batch) ii[cd.input_batch] = oi[d];
      }
    }
    const int f_in = AddLoops({i_per_group}, {true});
    ii[cd.input_feature].terms.push_back({f_in, 1});
    ki[cd.kernel_input_feature] = LoopIndex(f_in);
    for (size_t s = 0; s < ns; ++s) {
      const WindowDimension& wd = w.dims[s];
      const int win = AddLoops({ker.dim(cd.kernel_spatial[s])}, {true});
      ki[cd.kernel_spatial[s]] = wd.reversal ? DimIndex{{{win, -1}}, ker.dim(cd.kernel_spatial[s]) - 1} : LoopIndex(win);
      const DimIndex& os = oi[cd.output_spatial[s]];
      ii[cd.input_spatial[s]] = DimIndex{{{os.terms[0].loop, wd.stride}, {win, wd.window_dilation}}, -wd.pad_low};
    }
    operand_index_[0] = ii;
    operand_index_[1] = ki;
    return oi;
  }

  Index ReduceLoops(const Instruction& reduce) {
    const Shape& in = reduce.operand(0)->shape();
    const std::vector<int64_t>& rd = reduce.dimensions();
    std::vector<bool> red(in.rank(), false);
    for (int64_t d : rd) {
      if (d >= 0 && d < in.rank()) red[d] = true;
    }
    const int first = AddLoops(in.dims(), red);
    Index full, out;
    for (int64_t d = 0; d < in.rank(); ++d) {
      full.push_back(LoopIndex(first + static_cast<int>(d)));
      if (!red[d]) out.push_back(full.back());
    }
    const int64_t inputs = reduce.operand_count() / 2;
    for (int64_t n = 0; n < inputs; ++n) operand_index_[n] = full;
    for (int64_t n = inputs; n < reduce.operand_count(); ++n) operand_index_[n] = Index{};  // scalars
    return out;
  }

  std::optional<Index> ReduceWindowLoops(const Instruction& rw) {
    const Window& w = *rw.attrs().window;
    const Shape& in = rw.operand(0)->shape();
    const Shape& out = rw.shape().IsTuple() ? rw.shape().tuple_shape(0) : rw.shape();
    if (static_cast<int64_t>(w.dims.size()) != in.rank() || out.rank() != in.rank()) return std::nullopt;
    Index ii(in.rank()), oi(out.rank());
    const int first = AddLoops(out.dims(), std::vector<bool>(out.rank(), false));
    for (int64_t d = 0; d < in.rank(); ++d) {
      const WindowDimension& wd = w.dims[d];
      if (wd.base_dilation != 1) return std::nullopt;
      oi[d] = LoopIndex(first + static_cast<int>(d));
      if (wd.size == 1) {
        ii[d] = DimIndex{{{first + static_cast<int>(d), wd.stride}}, -wd.pad_low};
      } else {
        const int win = AddLoops({wd.size}, {true});
        ii[d] = DimIndex{{{first + static_cast<int>(d), wd.stride}, {win, wd.window_dilation}}, -wd.pad_low};
      }
    }
    const int64_t inputs = rw.operand_count() / 2;
    for (int64_t n = 0; n < inputs; ++n) operand_index_[n] = ii;
    for (int64_t n = inputs; n < rw.operand_count(); ++n) operand_index_[n] = Index{};
    return oi;
  }

  // ---- the generic per-opcode maps (the result's index -> an operand's) ----

  // The operand's index, given the result's; nullopt when the map is not affine.
  static std::optional<Index> OperandIndex(const Instruction& i, int64_t n, const Index& out) {
    const Shape& os = i.operand(n)->shape();
    if (!os.IsArray()) return std::nullopt;
    if (os.rank() == 0) return Index{};
    switch (i.opcode()) {
      case Opcode::kBroadcast: {
        Index r;
        for (int64_t d : i.dimensions()) {
          if (d < 0 || d >= static_cast<int64_t>(out.size())) return std::nullopt;
          r.push_back(out[d]);
        }
        return r;
      }
      case Opcode::kTranspose: {
        Index r(os.rank());
        const std::vector<int64_t>& p = i.dimensions();
        if (static_cast<int64_t>(p.size()) != os.rank()) return std::nullopt;
        for (size_t k = 0; k < p.size(); ++k) r[p[k]] = out[k];
        return r;
      }
      case Opcode::kSlice: {
        Index r;
        for (size_t d = 0; d < out.size() && d < i.attrs().slice.size(); ++d) {
          const SliceDim& sd = i.attrs().slice[d];
          r.push_back(Scaled(out[d], sd.stride, sd.start)[0]);
        }
        return r;
      }
      case Opcode::kPad: {
        if (n == 1) return Index{};
        Index r;
        for (size_t d = 0; d < out.size() && d < i.attrs().padding.size(); ++d) {
          const PaddingDim& pd = i.attrs().padding[d];
          if (pd.interior != 0) return std::nullopt;
          r.push_back(Scaled(out[d], 1, -pd.low)[0]);
        }
        return r;
      }
      case Opcode::kConcatenate: {
        if (i.dimensions().empty()) return std::nullopt;
        const int64_t cat = i.dimensions()[0];
        int64_t offset = 0;
        for (int64_t k = 0; k < n; ++k) offset += i.operand(k)->shape().dim(cat);
        Index r = out;
        r[cat].offset -= offset;
        return r;
      }
      case Opcode::kReverse: {
        Index r = out;
        for (int64_t d : i.dimensions()) r[d] = Scaled(out[d], -1, os.dim(d) - 1)[0];
        return r;
      }
      default:
        if (i.IsElementwise() && os.dims() == i.shape().dims()) return out;
        return std::nullopt;
    }
  }

  // ---- accesses ----

  // Records that `tensor`'s value (logical shape `s`) is touched at logical index `idx`.
  void Touch(const TensorId& tensor, const Shape& s, const Index& idx, bool write) {
    Access a;
    a.tensor = tensor;
    a.write = write;
    a.elem_bytes = std::max<int64_t>(1, PrimitiveByteSize(s.element_type()));
    const std::vector<int64_t> mtm = s.MinorToMajor();
    for (int64_t v = s.rank() - 1; v >= 0; --v) {
      a.dims.push_back(s.dim(mtm[v]));
      a.index.push_back(idx[mtm[v]]);
    }
    nest_.accesses.push_back(std::move(a));
  }
  void TouchView(const TensorId& tensor, const Shape& s, const std::vector<int64_t>& view, const Index& idx,
                 bool write) {
    if (view == s.dims()) return Touch(tensor, s, idx, write);
    if (!s.HasDefaultLayout()) return Opaque(tensor, s.ByteSize(), write);
    Access a;
    a.tensor = tensor;
    a.write = write;
    a.elem_bytes = std::max<int64_t>(1, PrimitiveByteSize(s.element_type()));
    a.dims = view;
    a.index = idx;
    nest_.accesses.push_back(std::move(a));
  }
  void Opaque(const TensorId& tensor, int64_t bytes, bool write) {
    Access a;
    a.tensor = tensor;
    a.write = write;
    a.opaque = true;
    a.opaque_bytes = std::max<int64_t>(0, bytes);
    nest_.accesses.push_back(std::move(a));
  }
  // Every tensor of operand n, opaque (`bytes` < 0: their full size).
  void OpaqueOperand(int64_t n, int64_t bytes = -1) {
    if (n < 0 || n >= static_cast<int64_t>(k_.operand_tensors.size())) return;
    for (const TensorAccess& t : k_.operand_tensors[n]) {
      Opaque(t.tensor, bytes < 0 ? static_cast<int64_t>(t.bytes) : std::min<int64_t>(bytes, t.bytes), false);
    }
  }
  void TouchOperand(int64_t n, const Shape& s, const std::vector<int64_t>& view, const Index& idx) {
    if (n < 0 || n >= static_cast<int64_t>(k_.operand_tensors.size())) return;
    const auto& ts = k_.operand_tensors[n];
    if (ts.size() != 1 || !s.IsArray()) return OpaqueOperand(n);
    TouchView(ts[0].tensor, s, view, idx, false);
  }

  // The value of `i` (inside the fused computation, or the kernel's own operand n when `i` is
  // null) is read at `idx` over dims `view` (its own dims, or a reshape's result dims over the
  // same bytes).
  void Read(const Instruction* i, const std::vector<int64_t>& view, const Index& idx) {
    if (++visits_ > 4096) return;  // a pathological DAG: the dedupe below keeps what was found
    const Shape& s = i->shape();
    if (i->opcode() == Opcode::kParameter) {
      return TouchOperand(i->parameter_number(), s, view, idx);
    }
    if (i == core_) return;  // the core's result lives in the kernel
    if (i->opcode() == Opcode::kConstant || i->opcode() == Opcode::kIota || i->opcode() == Opcode::kRng) return;
    const bool own_view = s.IsArray() && view == s.dims();
    if ((i->opcode() == Opcode::kReshape || i->opcode() == Opcode::kBitcast) && i->operand_count() == 1 &&
        s.HasDefaultLayout() && i->operand(0)->shape().IsArray() && i->operand(0)->shape().HasDefaultLayout()) {
      return Read(i->operand(0), view, idx);  // the same bytes, viewed as the result
    }
    if (own_view) {
      bool all = true;
      std::vector<std::optional<Index>> maps;
      for (int64_t n = 0; n < i->operand_count(); ++n) {
        maps.push_back(OperandIndex(*i, n, idx));
        all = all && maps.back().has_value();
      }
      if (all) {
        for (int64_t n = 0; n < i->operand_count(); ++n) {
          const Instruction* op = i->operand(n);
          if (op->shape().IsArray()) Read(op, op->shape().dims(), *maps[n]);
        }
        return;
      }
    } else if (i->IsElementwise()) {  // same bytes per element under the view
      bool same = true;
      for (const Instruction* op : i->operands()) same = same && op->shape().dims() == s.dims();
      if (same) {
        for (const Instruction* op : i->operands()) Read(op, view, idx);
        return;
      }
    }
    // Not affine: everything below is read whole (slice-like ops: what they produce).
    const int64_t cap = (i->opcode() == Opcode::kGather || i->opcode() == Opcode::kDynamicSlice) ? s.ByteSize() : -1;
    for (int64_t n = 0; n < i->operand_count(); ++n) ReadWhole(i->operand(n), n == 0 ? cap : -1);
  }
  void ReadWhole(const Instruction* i, int64_t cap) {
    if (++visits_ > 4096) return;
    if (i->opcode() == Opcode::kParameter) return OpaqueOperand(i->parameter_number(), cap);
    if (i == core_) return;
    for (const Instruction* op : i->operands()) ReadWhole(op, -1);
  }

  // An unfused instruction: its own loops, its operands are the kernel's inputs.
  void BuildSingle(const Instruction& i) {
    if (!i.shape().IsArray() || IsControlFlowOp(i) || !Affine(i)) return OpaqueKernel();
    core_ = &i;
    Index out = CoreLoops(i);
    for (int64_t n = 0; n < i.operand_count(); ++n) {
      const Shape& s = i.operand(n)->shape();
      std::optional<Index> idx = core_is_root_map_ ? OperandIndex(i, n, out) : operand_index_[n];
      if (idx && s.IsArray()) {
        TouchOperand(n, s, s.dims(), *idx);
      } else {
        OpaqueOperand(n, n == 0 && (i.opcode() == Opcode::kGather || i.opcode() == Opcode::kDynamicSlice)
                             ? i.shape().ByteSize() : -1);
      }
    }
    if ((i.opcode() == Opcode::kReshape || i.opcode() == Opcode::kBitcast) && i.operand(0)->shape().IsArray() &&
        i.operand(0)->shape().HasDefaultLayout() && i.shape().HasDefaultLayout()) {
      nest_.accesses.clear();  // the operand's bytes read in the result's order
      TouchOperand(0, i.operand(0)->shape(), i.shape().dims(), out);
    }
    WriteOutputs(out);
  }

  // Whether an unfused instruction has affine maps for every operand.
  static bool Affine(const Instruction& i) {
    switch (i.opcode()) {
      case Opcode::kDot: case Opcode::kConvolution: case Opcode::kReduce: case Opcode::kReduceWindow:
      case Opcode::kBroadcast: case Opcode::kTranspose: case Opcode::kSlice: case Opcode::kPad:
      case Opcode::kConcatenate: case Opcode::kReverse: case Opcode::kReshape: case Opcode::kBitcast:
        return true;
      default: return i.IsElementwise();
    }
  }

  // Writes each output tensor at the core's result index (outputs of other dims: opaque).
  void WriteOutputs(const Index& out) {
    for (size_t n = 0; n < k_.writes.size(); ++n) {
      const TensorId& t = k_.writes[n].tensor;
      const Shape* s = LeafShape(n);
      if (s != nullptr && s->IsArray() && static_cast<size_t>(s->rank()) == out.size() && core_dims_match(*s)) {
        Touch(t, *s, out, true);
      } else {
        Opaque(t, static_cast<int64_t>(k_.writes[n].bytes), true);
      }
    }
  }
  bool core_dims_match(const Shape& s) const {
    const Shape& c = core_->shape().IsTuple() ? core_->shape().tuple_shape(0) : core_->shape();
    return c.dims() == s.dims();
  }
  const Shape* LeafShape(size_t n) const {
    const Shape& s = k_.instr->shape();
    if (!s.IsTuple()) return n == 0 ? &s : nullptr;
    return n < static_cast<size_t>(s.tuple_size()) ? &s.tuple_shape(n) : nullptr;
  }

  void OpaqueKernel() {
    for (int64_t n = 0; n < static_cast<int64_t>(k_.operand_tensors.size()); ++n) {
      const Instruction& i = *k_.instr;
      const bool sliced = n == 0 && (i.opcode() == Opcode::kGather || i.opcode() == Opcode::kDynamicSlice);
      const bool in_place = n == 0 && i.opcode() == Opcode::kDynamicUpdateSlice;
      if (in_place) continue;
      OpaqueOperand(n, sliced ? i.shape().ByteSize() : -1);
    }
    for (const TensorAccess& w : k_.writes) {
      int64_t bytes = static_cast<int64_t>(w.bytes);
      Opaque(w.tensor, bytes, true);
    }
  }

  // A fusion: the core is its dot or convolution (output fusions), else a reduce or
  // reduce-window reaching the root, else the root.
  void BuildFusion(const Computation& body) {
    const Instruction* root = body.root();
    if (root == nullptr) return OpaqueKernel();
    std::vector<const Instruction*> outs;
    if (root->opcode() == Opcode::kTuple) {
      for (const Instruction* o : root->operands()) outs.push_back(o);
    } else {
      outs.push_back(root);
    }
    const Instruction* core = nullptr;
    for (const Instruction* f : body.PostOrder()) {
      if (f->opcode() == Opcode::kDot || f->opcode() == Opcode::kConvolution) core = core ? core : f;
    }
    if (core == nullptr) {
      for (const Instruction* o : outs) {
        if (o->opcode() == Opcode::kReduce || o->opcode() == Opcode::kReduceWindow) {
          core = o;
          break;
        }
      }
    }
    if (core == nullptr) core = outs[0];
    if (!core->shape().IsArray() && core->opcode() != Opcode::kReduce) return OpaqueKernel();
    core_ = core;
    Index out = CoreLoops(*core);
    // The core's operands.
    for (int64_t n = 0; n < core->operand_count(); ++n) {
      const Instruction* op = core->operand(n);
      std::optional<Index> idx = core_is_root_map_ ? OperandIndex(*core, n, out) : operand_index_[n];
      if (!op->shape().IsArray()) continue;
      if (idx) {
        const Instruction* saved = core_;
        core_ = nullptr;  // below the core nothing is the core
        Read(op, op->shape().dims(), *idx);
        core_ = saved;
      } else {
        ReadWhole(op, -1);
      }
    }
    // Everything between the core and the outputs is elementwise on the core's result index
    // (output fusions, multi-output loop fusions); other outputs are read whole and written opaque.
    for (size_t n = 0; n < outs.size(); ++n) {
      const Instruction* o = outs[n];
      if (o == core) continue;
      if (o->shape().IsArray() && core_dims_match(o->shape())) {
        Read(o, o->shape().dims(), out);
      } else {
        ReadWhole(o, -1);
      }
    }
    WriteOutputs(out);
  }

  // Merges accesses of one tensor with the same index map (a parameter read along two paths).
  void Dedupe() {
    std::vector<Access> kept;
    for (Access& a : nest_.accesses) {
      bool dup = false;
      for (const Access& b : kept) {
        if (b.tensor == a.tensor && b.write == a.write && b.opaque == a.opaque && b.dims == a.dims &&
            b.opaque_bytes == a.opaque_bytes && SameIndex(a.index, b.index)) {
          dup = true;
          break;
        }
      }
      if (!dup) kept.push_back(std::move(a));
    }
    nest_.accesses = std::move(kept);
  }
  static bool SameIndex(const Index& a, const Index& b) {
    if (a.size() != b.size()) return false;
    for (size_t d = 0; d < a.size(); ++d) {
      if (a[d].offset != b[d].offset || a[d].terms.size() != b[d].terms.size()) return false;
      for (size_t t = 0; t < a[d].terms.size(); ++t) {
        if (a[d].terms[t].loop != b[d].terms[t].loop || a[d].terms[t].coeff != b[d].terms[t].coeff) return false;
      }
    }
    return true;
  }

  const Kernel& k_;
  LoopNest& nest_;
  const Instruction* core_ = nullptr;
  bool core_is_root_map_ = false;
  std::vector<std::optional<Index>> operand_index_;
  int visits_ = 0;
};

}  // namespace

LoopNest BuildLoopNest(const Kernel& k, int64_t scratchpad_bytes) {
  LoopNest nest;
  nest.instr = k.instr;
  NestBuilder(k, nest).Build();
  const std::string key = TilingKey(*k.instr);
  ApplyTiling(nest, key.empty() ? "native" : key, scratchpad_bytes);
  return nest;
}

}  // namespace hlox::sp
