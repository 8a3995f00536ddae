// Positive and negative HLO cases for every simplifier rule (see simp_cases.h).
#include "tests/simplify/simp_cases.h"

namespace hlox::testing {
namespace {

// Common parameter lines.
constexpr char kX[] = "x = f32[4] parameter(0)\n";
constexpr char kXY[] = "x = f32[4] parameter(0)\ny = f32[4] parameter(1)\n";
constexpr char kI[] = "x = s32[4] parameter(0)\n";
constexpr char kIY[] = "x = s32[4] parameter(0)\ny = s32[4] parameter(1)\n";
constexpr char kP[] = "p = pred[4] parameter(0)\nq = pred[4] parameter(1)\n";
// A broadcast f32 constant named b<v>: Bc("1") -> "c1 = f32[] constant(1)\nb1 = ...".
std::string Bc(const std::string& name, const std::string& v, const std::string& t = "f32") {
  return "c" + name + " = " + t + "[] constant(" + v + ")\nb" + name + " = " + t + "[4] broadcast(c" +
         name + "), dimensions={}\n";
}

std::vector<SimpCase> Build() {
  std::vector<SimpCase> c;
  auto P = [&](const char* rule, std::string body, const char* expect) {
    c.push_back({rule, true, std::move(body), expect});
  };
  auto N = [&](const char* rule, std::string body) { c.push_back({rule, false, std::move(body), ""}); };
  std::string x = kX, xy = kXY, ix = kI, ixy = kIY, p = kP;

  // Arithmetic.
  P("add_zero", x + Bc("0", "0") + "ROOT r = f32[4] add(b0, x)\n", "x");
  N("add_zero", x + Bc("1", "1") + "ROOT r = f32[4] add(x, b1)\n");
  P("sub_zero", x + Bc("0", "0") + "ROOT r = f32[4] subtract(x, b0)\n", "x");
  N("sub_zero", x + Bc("0", "0") + "ROOT r = f32[4] subtract(b0, x)\n");
  P("zero_sub", x + Bc("0", "0") + "ROOT r = f32[4] subtract(b0, x)\n", "negate(x)");
  N("zero_sub", "x = u32[4] parameter(0)\n" + Bc("0", "0", "u32") + "ROOT r = u32[4] subtract(b0, x)\n");
  P("sub_self_int", ix + "ROOT r = s32[4] subtract(x, x)\n", "broadcast(const)");
  N("sub_self_int", x + "ROOT r = f32[4] subtract(x, x)\n");
  P("mul_one", x + Bc("1", "1") + "ROOT r = f32[4] multiply(b1, x)\n", "x");
  N("mul_one", x + Bc("2", "2") + "ROOT r = f32[4] multiply(x, b2)\n");
  P("mul_zero_int", ix + Bc("0", "0", "s32") + "ROOT r = s32[4] multiply(x, b0)\n", "broadcast(const)");
  N("mul_zero_int", x + Bc("0", "0") + "ROOT r = f32[4] multiply(x, b0)\n");
  P("mul_neg_one", x + Bc("m", "-1") + "ROOT r = f32[4] multiply(x, bm)\n", "negate(x)");
  N("mul_neg_one", x + Bc("m", "-2") + "ROOT r = f32[4] multiply(x, bm)\n");
  P("div_one", x + Bc("1", "1") + "ROOT r = f32[4] divide(x, b1)\n", "x");
  N("div_one", x + Bc("1", "1") + "ROOT r = f32[4] divide(b1, x)\n");
  P("neg_neg", x + "n = f32[4] negate(x)\nROOT r = f32[4] negate(n)\n", "x");
  N("neg_neg", x + "n = f32[4] abs(x)\nROOT r = f32[4] negate(n)\n");
  P("add_neg", xy + "n = f32[4] negate(y)\nROOT r = f32[4] add(x, n)\n", "subtract(x,y)");
  N("add_neg", xy + "n = f32[4] abs(y)\nROOT r = f32[4] add(x, n)\n");
  P("sub_neg", xy + "n = f32[4] negate(y)\nROOT r = f32[4] subtract(x, n)\n", "add(x,y)");
  N("sub_neg", xy + "n = f32[4] negate(y)\nROOT r = f32[4] subtract(n, x)\n");
  P("abs_abs", x + "a = f32[4] abs(x)\nROOT r = f32[4] abs(a)\n", "abs(x)");
  N("abs_abs", x + "a = f32[4] exponential(x)\nROOT r = f32[4] abs(a)\n");
  P("abs_neg", x + "n = f32[4] negate(x)\nROOT r = f32[4] abs(n)\n", "abs(x)");
  N("abs_neg", x + "a = f32[4] abs(x)\nROOT r = f32[4] abs(a)\n");
  P("neg_sub", xy + "d = f32[4] subtract(x, y)\nROOT r = f32[4] negate(d)\n", "subtract(y,x)");
  N("neg_sub", xy + "d = f32[4] add(x, y)\nROOT r = f32[4] negate(d)\n");
  P("mul_neg_neg", xy + "a = f32[4] negate(x)\nb = f32[4] negate(y)\nROOT r = f32[4] multiply(a, b)\n", "multiply(x,y)");
  N("mul_neg_neg", xy + "a = f32[4] negate(x)\nROOT r = f32[4] multiply(a, y)\n");
  P("div_pow2", x + Bc("q", "0.25") + "ROOT r = f32[4] divide(x, bq)\n", "multiply(x,broadcast(const))");
  P("div_pow2", x + Bc("q", "-8") + "ROOT r = f32[4] divide(x, bq)\n", "multiply(x,broadcast(const))");
  N("div_pow2", x + Bc("q", "3") + "ROOT r = f32[4] divide(x, bq)\n");
  N("div_pow2", ix + Bc("q", "4", "s32") + "ROOT r = s32[4] divide(x, bq)\n");

  // Logic and min/max.
  P("and_self", p + "ROOT r = pred[4] and(p, p)\n", "p");
  N("and_self", p + "ROOT r = pred[4] and(p, q)\n");
  P("or_self", p + "ROOT r = pred[4] or(p, p)\n", "p");
  N("or_self", p + "ROOT r = pred[4] or(p, q)\n");
  P("xor_self", ix + "ROOT r = s32[4] xor(x, x)\n", "broadcast(const)");
  N("xor_self", ixy + "ROOT r = s32[4] xor(x, y)\n");
  P("not_not", p + "n = pred[4] not(p)\nROOT r = pred[4] not(n)\n", "p");
  N("not_not", p + "n = pred[4] and(p, q)\nROOT r = pred[4] not(n)\n");
  P("and_true", p + Bc("t", "true", "pred") + "ROOT r = pred[4] and(p, bt)\n", "p");
  N("and_true", p + Bc("f", "false", "pred") + "ROOT r = pred[4] and(p, bf)\n");
  P("and_false", p + Bc("f", "false", "pred") + "ROOT r = pred[4] and(bf, p)\n", "broadcast(const)");
  N("and_false", p + Bc("t", "true", "pred") + "ROOT r = pred[4] and(p, bt)\n");
  P("or_false", ix + Bc("0", "0", "s32") + "ROOT r = s32[4] or(x, b0)\n", "x");
  N("or_false", ix + Bc("1", "1", "s32") + "ROOT r = s32[4] or(x, b1)\n");
  P("or_true", p + Bc("t", "true", "pred") + "ROOT r = pred[4] or(p, bt)\n", "broadcast(const)");
  N("or_true", ix + Bc("1", "1", "s32") + "ROOT r = s32[4] or(x, b1)\n");
  P("max_self", x + "ROOT r = f32[4] maximum(x, x)\n", "x");
  N("max_self", xy + "ROOT r = f32[4] maximum(x, y)\n");
  P("min_self", x + "ROOT r = f32[4] minimum(x, x)\n", "x");
  N("min_self", xy + "ROOT r = f32[4] minimum(x, y)\n");
  P("max_identity", x + Bc("n", "-inf") + "ROOT r = f32[4] maximum(bn, x)\n", "x");
  P("max_identity", "x = s8[4] parameter(0)\n" + Bc("n", "-128", "s8") + "ROOT r = s8[4] maximum(x, bn)\n", "x");
  N("max_identity", x + Bc("n", "-1e30") + "ROOT r = f32[4] maximum(x, bn)\n");
  N("max_identity", x + Bc("n", "inf") + "ROOT r = f32[4] maximum(x, bn)\n");
  P("min_identity", x + Bc("n", "inf") + "ROOT r = f32[4] minimum(x, bn)\n", "x");
  P("min_identity", "x = u16[4] parameter(0)\n" + Bc("n", "65535", "u16") + "ROOT r = u16[4] minimum(x, bn)\n", "x");
  N("min_identity", "x = u16[4] parameter(0)\n" + Bc("n", "65534", "u16") + "ROOT r = u16[4] minimum(x, bn)\n");

  // Compare and select.
  P("compare_self_int", ix + "ROOT r = pred[4] compare(x, x), direction=GE\n", "broadcast(const)");
  N("compare_self_int", x + "ROOT r = pred[4] compare(x, x), direction=EQ\n");
  P("select_same", p + xy.substr(0, 0) + "x = f32[4] parameter(2)\nROOT r = f32[4] select(p, x, x)\n", "x");
  N("select_same", p + "x = f32[4] parameter(2)\ny = f32[4] parameter(3)\nROOT r = f32[4] select(p, x, y)\n");
  P("select_const_pred", xy + Bc("t", "true", "pred") + "ROOT r = f32[4] select(bt, x, y)\n", "x");
  N("select_const_pred", p + "x = f32[4] parameter(2)\ny = f32[4] parameter(3)\nROOT r = f32[4] select(p, x, y)\n");
  P("select_not_pred", p + "x = f32[4] parameter(2)\ny = f32[4] parameter(3)\nn = pred[4] not(p)\n"
    "ROOT r = f32[4] select(n, x, y)\n", "select(p,y,x)");
  N("select_not_pred", p + "x = f32[4] parameter(2)\ny = f32[4] parameter(3)\nn = pred[4] and(p, q)\n"
    "ROOT r = f32[4] select(n, x, y)\n");

  // Reshape, transpose, broadcast, bitcast, copy, reverse.
  std::string m = "x = f32[2,3] parameter(0)\n";
  P("reshape_noop", m + "ROOT r = f32[2,3] reshape(x)\n", "x");
  N("reshape_noop", m + "ROOT r = f32[3,2] reshape(x)\n");
  P("reshape_reshape", m + "a = f32[6] reshape(x)\nROOT r = f32[3,2] reshape(a)\n", "reshape(x)");
  N("reshape_reshape", m + "a = f32[3,2] transpose(x), dimensions={1,0}\nROOT r = f32[6] reshape(a)\n");
  P("reshape_broadcast_scalar", "s = f32[] parameter(0)\nb = f32[2,3] broadcast(s), dimensions={}\n"
    "ROOT r = f32[6] reshape(b)\n", "broadcast(s)");
  N("reshape_broadcast_scalar", "v = f32[2] parameter(0)\nb = f32[2,3] broadcast(v), dimensions={0}\n"
    "ROOT r = f32[6] reshape(b)\n");
  P("transpose_identity", m + "ROOT r = f32[2,3] transpose(x), dimensions={0,1}\n", "x");
  N("transpose_identity", m + "ROOT r = f32[3,2] transpose(x), dimensions={1,0}\n");
  std::string m3 = "x = f32[2,3,4] parameter(0)\n";
  P("transpose_transpose", m3 + "a = f32[3,4,2] transpose(x), dimensions={1,2,0}\n"
    "ROOT r = f32[4,3,2] transpose(a), dimensions={1,0,2}\n", "transpose(x)");
  N("transpose_transpose", m3 + "a = f32[2,12] reshape(x)\nROOT r = f32[12,2] transpose(a), dimensions={1,0}\n");
  P("transpose_broadcast", "v = f32[2] parameter(0)\nb = f32[2,3] broadcast(v), dimensions={0}\n"
    "ROOT r = f32[3,2] transpose(b), dimensions={1,0}\n", "broadcast(v)");
  N("transpose_broadcast", m + "b = f32[2,3,4] broadcast(x), dimensions={0,1}\n"
    "ROOT r = f32[3,2,4] transpose(b), dimensions={1,0,2}\n");
  P("broadcast_noop", m + "ROOT r = f32[2,3] broadcast(x), dimensions={0,1}\n", "x");
  N("broadcast_noop", m + "ROOT r = f32[3,2] broadcast(x), dimensions={1,0}\n");
  P("broadcast_broadcast", "v = f32[2] parameter(0)\na = f32[2,3] broadcast(v), dimensions={0}\n"
    "ROOT r = f32[4,2,3] broadcast(a), dimensions={1,2}\n", "broadcast(v)");
  N("broadcast_broadcast", "v = f32[2] parameter(0)\na = f32[2] negate(v)\n"
    "ROOT r = f32[4,2] broadcast(a), dimensions={1}\n");
  P("bitcast_noop", m + "ROOT r = f32[2,3] bitcast(x)\n", "x");
  N("bitcast_noop", m + "ROOT r = f32[6] bitcast(x)\n");
  P("bitcast_bitcast", m + "a = f32[6] bitcast(x)\nROOT r = f32[3,2] bitcast(a)\n", "bitcast(x)");
  N("bitcast_bitcast", m + "a = f32[6] reshape(x)\nROOT r = f32[3,2] bitcast(a)\n");
  P("copy_noop", m + "ROOT r = f32[2,3] copy(x)\n", "x");
  N("copy_noop", "x = f32[2,3]{1,0} parameter(0)\nROOT r = f32[2,3]{0,1} copy(x)\n");
  P("copy_copy", "x = f32[2,3]{1,0} parameter(0)\na = f32[2,3]{0,1} copy(x)\nROOT r = f32[2,3]{1,0} copy(a)\n", "x");
  N("copy_copy", m + "a = f32[2,3] negate(x)\nROOT r = f32[2,3] copy(a)\n");
  P("reverse_reverse", m + "a = f32[2,3] reverse(x), dimensions={0}\nROOT r = f32[2,3] reverse(a), dimensions={0}\n", "x");
  N("reverse_reverse", m + "a = f32[2,3] reverse(x), dimensions={0}\nROOT r = f32[2,3] reverse(a), dimensions={1}\n");
  P("reverse_trivial", "x = f32[1,3] parameter(0)\nROOT r = f32[1,3] reverse(x), dimensions={0}\n", "x");
  N("reverse_trivial", "x = f32[1,3] parameter(0)\nROOT r = f32[1,3] reverse(x), dimensions={1}\n");

  // Convert.
  P("convert_noop", x + "ROOT r = f32[4] convert(x)\n", "x");
  N("convert_noop", x + "ROOT r = s32[4] convert(x)\n");
  P("convert_convert", x + "a = f64[4] convert(x)\nROOT r = f32[4] convert(a)\n", "x");
  N("convert_convert", x + "a = f16[4] convert(x)\nROOT r = f32[4] convert(a)\n");

  // Slices.
  std::string v8 = "x = f32[8] parameter(0)\n";
  P("slice_noop", x + "ROOT r = f32[4] slice(x), slice={[0:4]}\n", "x");
  N("slice_noop", x + "ROOT r = f32[3] slice(x), slice={[1:4]}\n");
  P("slice_slice", v8 + "a = f32[4] slice(x), slice={[1:8:2]}\nROOT r = f32[3] slice(a), slice={[1:4]}\n", "slice(x)");
  N("slice_slice", v8 + "a = f32[8] negate(x)\nROOT r = f32[3] slice(a), slice={[1:4]}\n");
  std::string cc = "x = f32[2] parameter(0)\ny = f32[3] parameter(1)\nk = f32[5] concatenate(x, y), dimensions={0}\n";
  P("slice_concat", cc + "ROOT r = f32[2] slice(k), slice={[2:4]}\n", "slice(y)");
  N("slice_concat", cc + "ROOT r = f32[2] slice(k), slice={[1:3]}\n");
  std::string pd = x + "z = f32[] constant(0)\nq = f32[8] pad(x, z), padding=2_2\n";
  P("slice_pad", pd + "ROOT r = f32[2] slice(q), slice={[3:5]}\n", "slice(x)");
  N("slice_pad", pd + "ROOT r = f32[3] slice(q), slice={[0:3]}\n");
  P("slice_broadcast_scalar", "s = f32[] parameter(0)\nb = f32[8] broadcast(s), dimensions={}\n"
    "ROOT r = f32[4] slice(b), slice={[0:4]}\n", "broadcast(s)");
  N("slice_broadcast_scalar", "v = f32[8] parameter(0)\nb = f32[8,2] broadcast(v), dimensions={0}\n"
    "ROOT r = f32[4,2] slice(b), slice={[0:4], [0:2]}\n");
  P("dynamic_slice_full", x + "i = s32[] parameter(1)\nROOT r = f32[4] dynamic-slice(x, i), dynamic_slice_sizes={4}\n", "x");
  N("dynamic_slice_full", x + "i = s32[] parameter(1)\nROOT r = f32[2] dynamic-slice(x, i), dynamic_slice_sizes={2}\n");
  P("dynamic_slice_const", v8 + "i = s32[] constant(7)\nROOT r = f32[2] dynamic-slice(x, i), dynamic_slice_sizes={2}\n",
    "slice(x)");
  N("dynamic_slice_const", v8 + "i = s32[] parameter(1)\nROOT r = f32[2] dynamic-slice(x, i), dynamic_slice_sizes={2}\n");
  P("dus_full", xy + "i = s32[] parameter(2)\nROOT r = f32[4] dynamic-update-slice(x, y, i)\n", "y");
  N("dus_full", x + "u = f32[2] parameter(1)\ni = s32[] parameter(2)\nROOT r = f32[4] dynamic-update-slice(x, u, i)\n");
  P("dus_empty_update", x + "u = f32[0] parameter(1)\ni = s32[] parameter(2)\n"
    "ROOT r = f32[4] dynamic-update-slice(x, u, i)\n", "x");
  N("dus_empty_update", x + "u = f32[2] parameter(1)\ni = s32[] parameter(2)\n"
    "ROOT r = f32[4] dynamic-update-slice(x, u, i)\n");

  // Concatenate.
  P("concat_single", x + "ROOT r = f32[4] concatenate(x), dimensions={0}\n", "x");
  N("concat_single", xy + "ROOT r = f32[8] concatenate(x, y), dimensions={0}\n");
  P("concat_drop_empty", xy + "e = f32[0] parameter(2)\nROOT r = f32[8] concatenate(x, e, y), dimensions={0}\n",
    "concatenate(x,y)");
  N("concat_drop_empty", xy + "ROOT r = f32[8] concatenate(x, y), dimensions={0}\n");
  P("concat_merge", xy + "z = f32[4] parameter(2)\na = f32[8] concatenate(x, y), dimensions={0}\n"
    "ROOT r = f32[12] concatenate(a, z), dimensions={0}\n", "concatenate(x,y,z)");
  N("concat_merge", "x = f32[2,2] parameter(0)\ny = f32[2,2] parameter(1)\na = f32[4,2] concatenate(x, y), dimensions={0}\n"
    "ROOT r = f32[4,4] concatenate(a, a), dimensions={1}\n");
  P("concat_slices", v8 + "a = f32[3] slice(x), slice={[0:3]}\nb = f32[5] slice(x), slice={[3:8]}\n"
    "ROOT r = f32[8] concatenate(a, b), dimensions={0}\n", "slice(x)");
  N("concat_slices", v8 + "a = f32[3] slice(x), slice={[0:3]}\nb = f32[4] slice(x), slice={[4:8]}\n"
    "ROOT r = f32[7] concatenate(a, b), dimensions={0}\n");

  // Pad.
  P("pad_noop", x + "z = f32[] constant(0)\nROOT r = f32[4] pad(x, z), padding=0_0\n", "x");
  N("pad_noop", x + "z = f32[] constant(0)\nROOT r = f32[5] pad(x, z), padding=1_0\n");
  P("pad_pad", x + "z = f32[] constant(0)\na = f32[6] pad(x, z), padding=1_1\nROOT r = f32[8] pad(a, z), padding=2_0\n",
    "pad(x,const)");
  N("pad_pad", x + "z = f32[] constant(0)\no = f32[] constant(1)\na = f32[6] pad(x, z), padding=1_1\n"
    "ROOT r = f32[8] pad(a, o), padding=2_0\n");

  // Dot.
  std::string plain = "a = f32[2,3] parameter(0)\nb = f32[3,4] parameter(1)\n"
                      "ROOT r = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
  P("dot_transpose_lhs", "a = f32[3,2] parameter(0)\nb = f32[3,4] parameter(1)\nt = f32[2,3] transpose(a), dimensions={1,0}\n"
    "ROOT r = f32[2,4] dot(t, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n", "dot(a,b)");
  N("dot_transpose_lhs", plain);
  P("dot_transpose_rhs", "a = f32[2,3] parameter(0)\nb = f32[4,3] parameter(1)\nt = f32[3,4] transpose(b), dimensions={1,0}\n"
    "ROOT r = f32[2,4] dot(a, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n", "dot(a,b)");
  N("dot_transpose_rhs", plain);
  P("dot_empty_contract", "a = f32[2,0] parameter(0)\nb = f32[0,4] parameter(1)\n"
    "ROOT r = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n", "broadcast(const)");
  N("dot_empty_contract", plain);
  P("dot_no_contract", "a = f32[2,3] parameter(0)\nb = f32[2,4] parameter(1)\n"
    "ROOT r = f32[2,3,4] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}\n",
    "multiply(broadcast(a),broadcast(b))");
  N("dot_no_contract", plain);
  P("dot_unit_contract", "a = f32[2,1] parameter(0)\nb = f32[1,4] parameter(1)\n"
    "ROOT r = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n",
    "multiply(broadcast(reshape(a)),broadcast(reshape(b)))");
  P("dot_unit_contract", "a = f32[3,2,1] parameter(0)\nb = f32[3,1] parameter(1)\n"
    "ROOT r = f32[3,2] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
    "rhs_contracting_dims={1}\n", "multiply(broadcast(reshape(a)),broadcast(reshape(b)))");
  N("dot_unit_contract", plain);
  N("dot_unit_contract", "a = bf16[2,1] parameter(0)\nb = bf16[1,4] parameter(1)\n"
    "ROOT r = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");

  // Reduce.
  P("reduce_no_dims", x + "z = f32[] constant(0)\nROOT r = f32[4] reduce(x, z), dimensions={}, to_apply=add_f32\n", "x");
  N("reduce_no_dims", x + "z = f32[] constant(1)\nROOT r = f32[4] reduce(x, z), dimensions={}, to_apply=add_f32\n");
  P("reduce_reshape", m3 + "a = f32[6,4] reshape(x)\nz = f32[] constant(0)\n"
    "ROOT r = f32[4] reduce(a, z), dimensions={0}, to_apply=add_f32\n", "reduce(x,const)");
  N("reduce_reshape", m3 + "a = f32[8,3] reshape(x)\nz = f32[] constant(0)\n"
    "ROOT r = f32[8] reduce(a, z), dimensions={1}, to_apply=add_f32\n");
  // The dims a reduce of a transpose keeps must keep their order in x (negative: x's 2, then 0).
  P("reduce_transpose", m3 + "t = f32[3,2,4] transpose(x), dimensions={1,0,2}\nz = f32[] constant(0)\n"
    "ROOT r = f32[2,4] reduce(t, z), dimensions={0}, to_apply=add_f32\n", "reduce(x,const)");
  N("reduce_transpose", m3 + "t = f32[4,3,2] transpose(x), dimensions={2,1,0}\nz = f32[] constant(0)\n"
    "ROOT r = f32[4,2] reduce(t, z), dimensions={1}, to_apply=add_f32\n");
  P("reduce_broadcast", ix + "b = s32[3,4] broadcast(x), dimensions={1}\nz = s32[] constant(0)\n"
    "ROOT r = s32[4] reduce(b, z), dimensions={0}, to_apply=add_s32\n", "multiply(x,broadcast(const))");
  N("reduce_broadcast", x + "b = f32[3,4] broadcast(x), dimensions={1}\nz = f32[] constant(0)\n"
    "ROOT r = f32[4] reduce(b, z), dimensions={0}, to_apply=add_f32\n");
  P("reduce_broadcast", x + "b = f32[3,4] broadcast(x), dimensions={1}\nz = f32[] constant(-inf)\n"
    "ROOT r = f32[4] reduce(b, z), dimensions={0}, to_apply=max_f32\n", "x");

  // Power, exp/log, sqrt.
  P("pow_one", x + Bc("1", "1") + "ROOT r = f32[4] power(x, b1)\n", "x");
  N("pow_one", x + Bc("3", "3") + "ROOT r = f32[4] power(x, b3)\n");
  P("pow_zero", x + Bc("0", "0") + "ROOT r = f32[4] power(x, b0)\n", "broadcast(const)");
  N("pow_zero", x + Bc("3", "3") + "ROOT r = f32[4] power(x, b3)\n");
  P("pow_two", x + Bc("2", "2") + "ROOT r = f32[4] power(x, b2)\n", "multiply(x,x)");
  N("pow_two", x + Bc("3", "3") + "ROOT r = f32[4] power(x, b3)\n");
  P("pow_neg_one", x + Bc("m", "-1") + "ROOT r = f32[4] power(x, bm)\n", "divide(broadcast(const),x)");
  N("pow_neg_one", ix + Bc("m", "-1", "s32") + "ROOT r = s32[4] power(x, bm)\n");
  P("log_exp", x + "e = f32[4] exponential(x)\nROOT r = f32[4] log(e)\n", "x");
  N("log_exp", x + "e = f32[4] negate(x)\nROOT r = f32[4] log(e)\n");
  P("div_sqrt", xy + "s = f32[4] sqrt(y)\nROOT r = f32[4] divide(x, s)\n", "multiply(x,rsqrt(y))");
  N("div_sqrt", xy + "ROOT r = f32[4] divide(x, y)\n");
  P("div_rsqrt", xy + "s = f32[4] rsqrt(y)\nROOT r = f32[4] divide(x, s)\n", "multiply(x,sqrt(y))");
  N("div_rsqrt", xy + "s = f32[4] exponential(y)\nROOT r = f32[4] divide(x, s)\n");

  // Clamp.
  P("clamp_in_range", "x = u32[4] parameter(0)\nlo = u32[] constant(0)\nhi = u32[] constant(4294967295)\n"
    "ROOT r = u32[4] clamp(lo, x, hi)\n", "x");
  P("clamp_in_range", "x = s32[4] iota(), iota_dimension=0\nlo = s32[] constant(0)\nhi = s32[] constant(3)\n"
    "ROOT r = s32[4] clamp(lo, x, hi)\n", "iota()");
  // Without num_partitions in the header: single-replica semantics, the id is 0.
  P("clamp_in_range", "x = u32[] partition-id()\nlo = u32[] constant(0)\nhi = u32[] constant(3)\n"
    "ROOT r = u32[] clamp(lo, x, hi)\n", "partition-id()");
  N("clamp_in_range", "x = s32[4] iota(), iota_dimension=0\nlo = s32[] constant(0)\nhi = s32[] constant(2)\n"
    "ROOT r = s32[4] clamp(lo, x, hi)\n");
  N("clamp_in_range", "x = u32[4] parameter(0)\nlo = u32[] constant(1)\nhi = u32[] constant(4294967295)\n"
    "ROOT r = u32[4] clamp(lo, x, hi)\n");
  return c;
}

}  // namespace

const std::vector<SimpCase>& SimpCases() {
  static const std::vector<SimpCase> cases = Build();
  return cases;
}

std::string WrapEntry(const std::string& body) {
  return "HloModule m\n\n"
         "add_f32 {\n  fa = f32[] parameter(0)\n  fb = f32[] parameter(1)\n  ROOT fs = f32[] add(fa, fb)\n}\n\n"
         "add_s32 {\n  ia = s32[] parameter(0)\n  ib = s32[] parameter(1)\n  ROOT is = s32[] add(ia, ib)\n}\n\n"
         "max_f32 {\n  ma = f32[] parameter(0)\n  mb = f32[] parameter(1)\n  ROOT ms = f32[] maximum(ma, mb)\n}\n\n"
         "ENTRY e {\n" + body + "}\n";
}

}  // namespace hlox::testing
