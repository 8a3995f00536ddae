// What the runtime refuses (docs/HLO_COVERAGE.md "Opcodes": the host-transfer ops, and
// stochastic-convert to a float type, which XLA does not define) parses and verifies, and running
// it stops with an Unimplemented status that says what: never a wrong answer, never a crash.
#include <string>

#include "gtest/gtest.h"
#include "ir/verifier.h"
#include "tests/runtime/runtime_test_util.h"

namespace hlox::rt {
namespace {

using testing::MakeArray;
using testing::ParseOrFail;
using testing::RunText;
using testing::S;

struct Refused {
  const char* opcode;
  const char* text;
  std::vector<const char*> params;
  const char* says;  // part of the error message
};

const Refused kRefused[] = {
    {"stochastic-convert",
     "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  u = u32[4] parameter(1)\n"
     "  ROOT r = bf16[4] stochastic-convert(p, u)\n}\n",
     {"f32[4]", "u32[4]"},
     "stochastic-convert r: to bf16 is not defined"},
    {"infeed",
     "HloModule m\nENTRY e {\n  t = token[] after-all()\n  ROOT r = (f32[4], token[]) infeed(t)\n}\n",
     {},
     "opcode 'infeed' is not supported"},
    {"outfeed",
     "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  t = token[] after-all()\n"
     "  ROOT r = token[] outfeed(p, t), outfeed_shape=f32[4]\n}\n",
     {"f32[4]"},
     "opcode 'outfeed' is not supported"},
};

TEST(RefusedOpcodes, RunStopsWithAnErrorSayingWhat) {
  for (const Refused& r : kRefused) {
    SCOPED_TRACE(r.opcode);
    auto module = ParseOrFail(r.text);
    ASSERT_NE(module, nullptr);
    EXPECT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module);
    std::vector<Value> args;
    for (const char* shape : r.params) args.push_back(MakeArray(S(shape), [](int64_t i) { return 0.25 * i; }));
    auto out = RunText(r.text, args);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented) << out.status();
    EXPECT_NE(std::string(out.status().message()).find(r.says), std::string::npos)
        << out.status();
  }
}

}  // namespace
}  // namespace hlox::rt
