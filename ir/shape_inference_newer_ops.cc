// Shape inference for XLA's newest opcodes: scan (a loop over one dimension carrying state),
// shuffle (rotate or permute elements along chosen dimensions) and collective-reduce (a reduction
// to one root), with collective-broadcast, whose dynamic-root form shares collective-reduce's
// operand rule. Each checks what XLA's verifier checks for these forms and returns the result
// shape without layout.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/shape_inference.h"

namespace hlox {
namespace {

absl::Status Bad(const std::string& why) { return absl::InvalidArgumentError(why); }

Shape Plain(const Shape& s) { return s.IsArray() ? Shape(s.element_type(), s.dims()) : s; }

// `s` without dimension `d`, and `s` with a dimension of `size` inserted before position `d`.
Shape DeleteDim(const Shape& s, int64_t d) {
  std::vector<int64_t> dims = s.dims();
  dims.erase(dims.begin() + d);
  return Shape(s.element_type(), dims);
}
Shape InsertDim(const Shape& s, int64_t d, int64_t size) {
  std::vector<int64_t> dims = s.dims();
  dims.insert(dims.begin() + d, size);
  return Shape(s.element_type(), dims);
}

}  // namespace

// scan(inputs..., inits...), dimensions={d}, num_carries=k, to_apply=f: step t reads slice t
// (from the end when is_reverse) of every input along d, calls f(slices..., carries...) and gets
// (outputs..., carries...); output i's slices are stacked along d. The result is (output
// arrays..., final carries...), or the one array when the declared shape is not a tuple.
absl::StatusOr<Shape> InferScan(const Instruction& instr) {
  const Attributes& a = instr.attrs();
  if (a.dimensions.size() != 1) return Bad("scan needs exactly one dimension in dimensions={...}");
  if (instr.called_computations().size() != 1) return Bad("scan needs one to_apply computation");
  const int64_t n = instr.operand_count(), k = a.num_carries;
  if (k > n) return Bad(absl::StrCat("scan has num_carries=", k, " but only ", n, " operands"));
  const int64_t n_in = n - k, d = a.dimensions[0];
  int64_t length = -1;
  std::vector<Shape> params;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& s = instr.operand(i)->shape();
    if (i >= n_in) {
      params.push_back(Plain(s));
      continue;
    }
    if (!s.IsArray()) return Bad(absl::StrCat("scan input ", i, " is not an array"));
    if (d < 0 || d >= s.rank()) return Bad(absl::StrCat("scan dimension ", d, " is outside input ", i, " of rank ", s.rank()));
    if (length >= 0 && s.dim(d) != length) {
      return Bad(absl::StrCat("scan inputs differ in length along dimension ", d, ": ", length, " and ", s.dim(d)));
    }
    length = s.dim(d);
    params.push_back(DeleteDim(s, d));
  }
  const Computation& f = *instr.called_computations()[0];
  if (f.parameter_count() != n) {
    return Bad(absl::StrCat("scan computation ", f.name(), " takes ", f.parameter_count(), " parameters, expected ", n,
                            " (one per input slice, then one per carry)"));
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!f.parameter(i)->shape().Compatible(params[i])) {
      return Bad(absl::StrCat("scan computation parameter ", i, " is ", f.parameter(i)->shape().ToString(false),
                              ", expected ", params[i].ToString(false)));
    }
  }
  const Shape& r = f.ResultShape();
  std::vector<Shape> step = r.IsTuple() ? r.tuple_shapes() : std::vector<Shape>{r};
  if (static_cast<int64_t>(step.size()) < k) {
    return Bad(absl::StrCat("scan computation returns ", step.size(), " values, fewer than num_carries=", k));
  }
  const int64_t n_out = static_cast<int64_t>(step.size()) - k;
  for (int64_t j = 0; j < k; ++j) {
    if (!step[n_out + j].Compatible(params[n_in + j])) {
      return Bad(absl::StrCat("scan computation returns carry ", j, " as ", step[n_out + j].ToString(false),
                              ", but its initial value is ", params[n_in + j].ToString(false)));
    }
  }
  if (length < 0 && n_out > 0) {  // no inputs: the declared outputs give the length
    const Shape& declared = instr.shape().IsTuple() ? instr.shape().tuple_shape(0) : instr.shape();
    if (declared.IsArray() && d >= 0 && d < declared.rank()) length = declared.dim(d);
  }
  if (length < 0) return Bad("scan without inputs needs declared outputs that give its length");
  std::vector<Shape> result;
  for (int64_t i = 0; i < n_out; ++i) {
    if (!step[i].IsArray()) return Bad(absl::StrCat("scan output ", i, " is not an array"));
    if (d > step[i].rank()) {
      return Bad(absl::StrCat("scan dimension ", d, " cannot be inserted into output ", i, " of rank ", step[i].rank()));
    }
    result.push_back(InsertDim(step[i], d, length));
  }
  for (int64_t j = 0; j < k; ++j) result.push_back(params[n_in + j]);
  if (result.size() == 1 && !instr.shape().IsTuple()) return result[0];
  return Shape::Tuple(result);
}

// shuffle(x), dimensions={...}, mode=rotate, shifts={...}: along each listed dimension (in
// order) element i takes element (i + shift) mod size. mode=permute, indices=L: element e takes
// the operand element whose coordinates on the listed dimensions are L's entries for e (L's last
// dimension holds one coordinate per listed dimension, or is left out when one dimension is
// listed; a dimension of L of size 1 is shared by every coordinate along it), and e's own
// coordinates elsewhere. The result has the operand's shape.
absl::StatusOr<Shape> InferShuffle(const Instruction& instr) {
  const Attributes& a = instr.attrs();
  const Shape& x = instr.operand(0)->shape();
  if (!x.IsArray()) return Bad("shuffle operand is not an array");
  std::vector<bool> seen(x.rank(), false);
  for (int64_t d : a.dimensions) {
    if (d < 0 || d >= x.rank()) return Bad(absl::StrCat("shuffle dimension ", d, " is outside rank ", x.rank()));
    if (seen[d]) return Bad(absl::StrCat("shuffle dimension ", d, " is listed twice"));
    seen[d] = true;
  }
  const int64_t nd = static_cast<int64_t>(a.dimensions.size());
  if (a.shuffle_mode == "rotate") {
    if (a.shuffle_indices) return Bad("a rotate shuffle takes shifts, not indices");
    if (static_cast<int64_t>(a.shuffle_shifts.size()) != nd) {
      return Bad(absl::StrCat("rotate shuffle has ", a.shuffle_shifts.size(), " shifts for ", nd, " dimensions"));
    }
  } else if (a.shuffle_mode == "permute") {
    if (!a.shuffle_shifts.empty()) return Bad("a permute shuffle takes indices, not shifts");
    if (!a.shuffle_indices) return Bad("a permute shuffle needs indices=...");
    const Literal& idx = *a.shuffle_indices;
    if (idx.elided()) return Bad("shuffle indices are elided");
    const Shape& is = idx.shape();
    std::vector<int64_t> want = x.dims();
    want.push_back(nd);
    const bool direct = nd == 1 && is.rank() == x.rank();  // one dimension: its coordinate alone
    if (!direct && is.rank() != x.rank() + 1) {
      return Bad(absl::StrCat("shuffle indices ", is.ToString(false), " need rank ", x.rank() + 1,
                              " (the operand's dimensions and one of coordinates)"));
    }
    for (int64_t j = 0; j < is.rank(); ++j) {
      if (is.dim(j) != want[j] && is.dim(j) != 1) {
        return Bad(absl::StrCat("shuffle indices dimension ", j, " is ", is.dim(j), ", expected ", want[j], " or 1"));
      }
    }
    const int64_t count = idx.element_count();
    for (int64_t e = 0; e < count; ++e) {
      // The coordinate of entry e is its index along the last dimension (always 0 in the direct form).
      const int64_t c = direct || is.dim(is.rank() - 1) == 1 ? 0 : e % is.dim(is.rank() - 1);
      const int64_t v = idx.GetAsInt64(e), size = x.dim(a.dimensions[c]);
      if (v < 0 || v >= size) {
        return Bad(absl::StrCat("shuffle index ", v, " (entry ", e, ") is outside dimension ", a.dimensions[c],
                                " of size ", size));
      }
    }
  } else {
    return Bad("shuffle needs mode=rotate or mode=permute");
  }
  return Plain(x);
}

// collective-reduce / collective-broadcast: the result has the shapes of the data operands; with
// has_dynamic_root=true the last operand is a one-element array naming the root.
absl::StatusOr<Shape> InferRootedCollective(const Instruction& instr) {
  int64_t n = instr.operand_count();
  if (instr.attrs().has_dynamic_root) {
    if (n < 2) return Bad("has_dynamic_root=true needs the data operands and a root operand");
    const Shape& root = instr.operand(n - 1)->shape();
    if (!root.IsArray() || root.ElementCount() != 1) {  // XLA's own tests give it as s32[1] and f32[1]
      return Bad(absl::StrCat("the root operand must be a one-element array, not ", root.ToString(false)));
    }
    --n;
  }
  if (n == 0) return Bad("collective without data operands");
  std::vector<Shape> out;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& s = instr.operand(i)->shape();
    if (!s.IsArray()) return Bad(absl::StrCat("collective operand ", i, " is not an array"));
    out.push_back(Plain(s));
  }
  return out.size() == 1 ? out[0] : Shape::Tuple(out);
}

}  // namespace hlox
