// The verifier on small modules: each structural or shape error is caught with a message naming
// the computation, the instruction and the problem; the valid twin of each case verifies.
#include <string>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/verifier.h"

namespace hlox {
namespace {

// Wraps `body` (instruction lines) into an entry computation; `extra` holds other computations.
std::string Wrap(const std::string& body, const std::string& extra = "") {
  return "HloModule m\n\n" + extra + "ENTRY main {\n" + body + "}\n";
}

absl::Status VerifyText(const std::string& text) {
  auto m = ParseModule(text, "t.hlo");
  if (!m.ok()) return m.status();
  return VerifyModule(**m);
}

const char kAdd[] = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n";

// A ragged-dot of lhs f32[4,2] and rhs f32[2,2,3] with the given sizes and result shapes and
// group attribute.
std::string RaggedDot(const std::string& sizes, const std::string& result, const std::string& group) {
  return "  l = f32[4,2] parameter(0)\n  r = f32[2,2,3] parameter(1)\n  g = " + sizes + " parameter(2)\n  ROOT d = " +
         result + " ragged-dot(l, r, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}" +
         (group.empty() ? "" : ", " + group) + "\n";
}

// A scaled-dot of f32[4,8] and f32[8,3] with the given lhs scale shape (rhs scale f32[2,3]).
std::string ScaledDot(const std::string& lhs_scale) {
  return "  l = f32[4,8] parameter(0)\n  r = f32[8,3] parameter(1)\n  ls = " + lhs_scale +
         " parameter(2)\n  rs = f32[2,3] parameter(3)\n"
         "  ROOT d = f32[4,3] scaled-dot(l, r, ls, rs), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
}

struct Case {
  const char* name;
  std::string good, bad, expect;  // `expect`: a fragment of the error message
};

TEST(Verifier, CatchesErrorsAndAcceptsValidTwins) {
  const Case cases[] = {
      {"broadcast", Wrap("  p = f32[3] parameter(0)\n  ROOT b = f32[2,3] broadcast(p), dimensions={1}\n"),
       Wrap("  p = f32[3] parameter(0)\n  ROOT b = f32[2,3] broadcast(p), dimensions={0}\n"), "broadcast"},
      {"dot", Wrap("  a = f32[2,3] parameter(0)\n  b = f32[3,4] parameter(1)\n  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"),
       Wrap("  a = f32[2,3] parameter(0)\n  b = f32[4,3] parameter(1)\n  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"),
       "contracting"},
      {"reduce", Wrap("  p = f32[2,5] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[2] reduce(p, z), dimensions={1}, to_apply=add\n", kAdd),
       Wrap("  p = f32[2,5] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[5] reduce(p, z), dimensions={1}, to_apply=add\n", kAdd),
       "declared shape"},
      {"tuple index", Wrap("  p = (f32[], s32[]) parameter(0)\n  ROOT g = s32[] get-tuple-element(p), index=1\n"),
       Wrap("  p = (f32[], s32[]) parameter(0)\n  ROOT g = s32[] get-tuple-element(p), index=2\n"), "index"},
      {"operand count", Wrap("  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n"),
       Wrap("  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a, a)\n"), "operands"},
      {"iota", Wrap("  ROOT i = s32[4,3] iota(), iota_dimension=1\n"), Wrap("  ROOT i = s32[4,3] iota(), iota_dimension=2\n"),
       "iota_dimension"},
      {"all-gather", Wrap("  p = f32[2,3] parameter(0)\n  ROOT g = f32[2,6] all-gather(p), dimensions={1}\n"),
       Wrap("  p = f32[2,3] parameter(0)\n  ROOT g = f32[2,7] all-gather(p), dimensions={1}\n"), "multiple"},
      {"reducer signature", Wrap("  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add\n", kAdd),
       Wrap("  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=neg\n",
            "neg {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\n\n"),
       "parameters"},
      {"while", Wrap("  p = s32[] parameter(0)\n  ROOT w = s32[] while(p), condition=c, body=b\n",
                     "c {\n  x = s32[] parameter(0)\n  z = s32[] constant(3)\n  ROOT lt = pred[] compare(x, z), direction=LT\n}\n\n"
                     "b {\n  y = s32[] parameter(0)\n  o = s32[] constant(1)\n  ROOT s = s32[] add(y, o)\n}\n\n"),
       Wrap("  p = s32[] parameter(0)\n  ROOT w = s32[] while(p), condition=c, body=b\n",
            "c {\n  x = s32[] parameter(0)\n  z = s32[] constant(3)\n  ROOT lt = pred[] compare(x, z), direction=LT\n}\n\n"
            "b {\n  y = s32[] parameter(0)\n  ROOT f = f32[] convert(y)\n}\n\n"),
       "body"},
      {"convolution", Wrap("  x = f32[1,5,5,2] parameter(0)\n  k = f32[3,3,2,4] parameter(1)\n"
                           "  ROOT c = f32[1,3,3,4] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f\n"),
       Wrap("  x = f32[1,5,5,2] parameter(0)\n  k = f32[3,3,2,4] parameter(1)\n"
            "  ROOT c = f32[1,5,5,4] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f\n"),
       "declared shape"},
      {"ragged-all-to-all offsets", Wrap("  in = f32[6,2] parameter(0)\n  out = f32[5,2] parameter(1)\n  o = s32[2] parameter(2)\n"
                                         "  ROOT r = f32[5,2] ragged-all-to-all(in, out, o, o, o, o), replica_groups={{0,1}}\n"),
       Wrap("  in = f32[6,2] parameter(0)\n  out = f32[5,2] parameter(1)\n  o = s32[2] parameter(2)\n  f = f32[2] parameter(3)\n"
            "  ROOT r = f32[5,2] ragged-all-to-all(in, out, o, f, o, o), replica_groups={{0,1}}\n"),
       "s32 or s64"},
      {"ragged-all-to-all rows", Wrap("  in = f32[6,2] parameter(0)\n  out = f32[5,2] parameter(1)\n  o = s32[2] parameter(2)\n"
                                      "  ROOT r = f32[5,2] ragged-all-to-all(in, out, o, o, o, o)\n"),
       Wrap("  in = f32[6,3] parameter(0)\n  out = f32[5,2] parameter(1)\n  o = s32[2] parameter(2)\n"
            "  ROOT r = f32[5,2] ragged-all-to-all(in, out, o, o, o, o)\n"),
       "beyond the leading dimension"},
      {"ragged-all-to-all result", Wrap("  in = f32[6,2] parameter(0)\n  out = f32[5,2] parameter(1)\n  o = s32[2] parameter(2)\n"
                                        "  ROOT r = f32[5,2] ragged-all-to-all(in, out, o, o, o, o)\n"),
       Wrap("  in = f32[6,2] parameter(0)\n  out = f32[5,2] parameter(1)\n  o = s32[2] parameter(2)\n"
            "  ROOT r = f32[6,2] ragged-all-to-all(in, out, o, o, o, o)\n"),
       "declared shape"},
      // ragged-dot: lhs [4,2] rows in groups, rhs [g=2,2,3].
      {"ragged-dot group dims", Wrap(RaggedDot("s32[2]", "f32[4,3]", "rhs_group_dims={0}")),
       Wrap(RaggedDot("s32[2]", "f32[4,3]", "rhs_group_dims={1}")), "group dimension must be neither"},
      {"ragged-dot group missing", Wrap(RaggedDot("s32[2]", "f32[4,3]", "rhs_group_dims={0}")),
       Wrap(RaggedDot("s32[2]", "f32[4,3]", "")), "needs exactly one rhs_group_dims, has 0"},
      {"ragged-dot group count", Wrap(RaggedDot("s32[2]", "f32[4,3]", "rhs_group_dims={0}")),
       Wrap(RaggedDot("s32[3]", "f32[4,3]", "rhs_group_dims={0}")), "group_sizes has dims [3], expected [2]"},
      {"ragged-dot group type", Wrap(RaggedDot("s64[2]", "f32[4,3]", "rhs_group_dims={0}")),
       Wrap(RaggedDot("f32[2]", "f32[4,3]", "rhs_group_dims={0}")), "group_sizes must be an integer array"},
      {"ragged-dot result", Wrap(RaggedDot("s32[2]", "f32[4,3]", "rhs_group_dims={0}")),
       Wrap(RaggedDot("s32[2]", "f32[2,4,3]", "rhs_group_dims={0}")), "declared shape"},
      {"ragged-dot contracting", Wrap("  l = f32[4,6] parameter(0)\n  r = f32[6,3] parameter(1)\n  g = s32[5] parameter(2)\n"
                                      "  ROOT d = f32[5,4,3] ragged-dot(l, r, g), lhs_contracting_dims={1}, "
                                      "rhs_contracting_dims={0}, lhs_ragged_dims={1}\n"),
       Wrap("  l = f32[4,6] parameter(0)\n  r = f32[6,3] parameter(1)\n  g = s32[5] parameter(2)\n"
            "  ROOT d = f32[5,4,3] ragged-dot(l, r, g), lhs_contracting_dims={1}, "
            "rhs_contracting_dims={0}, lhs_ragged_dims={1}, rhs_group_dims={0}\n"),
       "contracting ragged dimension takes no rhs_group_dims"},
      {"ragged-dot prefix", Wrap("  l = f32[3,4,2] parameter(0)\n  r = f32[2,2,5] parameter(1)\n  g = s32[3,2] parameter(2)\n"
                                 "  ROOT d = f32[3,4,5] ragged-dot(l, r, g), lhs_contracting_dims={2}, "
                                 "rhs_contracting_dims={1}, lhs_ragged_dims={1}, rhs_group_dims={0}\n"),
       Wrap("  l = f32[3,4,2] parameter(0)\n  r = f32[2,2,5] parameter(1)\n  g = s32[4,2] parameter(2)\n"
            "  ROOT d = f32[3,4,5] ragged-dot(l, r, g), lhs_contracting_dims={2}, "
            "rhs_contracting_dims={1}, lhs_ragged_dims={1}, rhs_group_dims={0}\n"),
       "expected [3,2] or [2]"},
      {"scaled-dot blocks", Wrap(ScaledDot("f32[4,2]")), Wrap(ScaledDot("f32[4,3]")), "do not divide"},
      {"scaled-dot rank", Wrap(ScaledDot("f32[4,2]")), Wrap(ScaledDot("f32[8]")), "lhs scale has rank 1"},
      {"mulhi", Wrap("  x = u32[3] parameter(0)\n  ROOT m = u32[3] mulhi(x, x)\n"),
       Wrap("  x = f32[3] parameter(0)\n  ROOT m = f32[3] mulhi(x, x)\n"), "mulhi takes two integer operands"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::Status good = VerifyText(c.good);
    EXPECT_TRUE(good.ok()) << good;
    absl::Status bad = VerifyText(c.bad);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(std::string(bad.message()).find(c.expect), std::string::npos) << bad.message();
    EXPECT_NE(std::string(bad.message()).find("computation"), std::string::npos) << bad.message();
  }
}

}  // namespace
}  // namespace hlox
