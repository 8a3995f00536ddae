// The opcodes the runtime refuses (docs/HLO_COVERAGE.md "Opcodes": fft, stochastic-convert and
// the host-transfer ops) parse and verify, and running them stops with an Unimplemented status that
// names the opcode and the instruction: never a wrong answer, never a crash.
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
};

const Refused kRefused[] = {
    {"fft",
     "HloModule m\nENTRY e {\n  p = c64[8] parameter(0)\n  ROOT r = c64[8] fft(p), fft_type=FFT, fft_length={8}\n}\n",
     {"c64[8]"}},
    {"stochastic-convert",
     "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  u = u32[4] parameter(1)\n"
     "  ROOT r = bf16[4] stochastic-convert(p, u)\n}\n",
     {"f32[4]", "u32[4]"}},
    {"infeed",
     "HloModule m\nENTRY e {\n  t = token[] after-all()\n  ROOT r = (f32[4], token[]) infeed(t)\n}\n",
     {}},
    {"outfeed",
     "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  t = token[] after-all()\n"
     "  ROOT r = token[] outfeed(p, t), outfeed_shape=f32[4]\n}\n",
     {"f32[4]"}},
};

TEST(RefusedOpcodes, RunStopsWithAnErrorNamingTheOpcode) {
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
    EXPECT_NE(std::string(out.status().message()).find(std::string("opcode '") + r.opcode + "' is not supported"),
              std::string::npos)
        << out.status();
  }
}

}  // namespace
}  // namespace hlox::rt
