// The executor's allocation limit: the parser accepts any declared shape whose byte size fits
// int64, so the executor is where a huge result is refused, with a status naming the
// instruction, before any memory is touched.
#include <string>

#include "gtest/gtest.h"
#include "tests/runtime/runtime_test_util.h"

namespace hlox::rt {
namespace {

using testing::MakeArray;
using testing::RunText;
using testing::S;
using testing::ToDoubles;

std::string Broadcast(const std::string& dims) {
  return "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT b = f32[" + dims +
         "] broadcast(p), dimensions={}\n}\n";
}

TEST(ExecutorAllocationLimit, RefusesBuffersOverTwoToTheFortyElements) {
  Value one = MakeArray(S("f32[]"), [](int64_t) { return 1.0; });
  auto small = RunText(Broadcast("2,2"), {one});
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(ToDoubles(*small), (std::vector<double>{1, 1, 1, 1}));
  auto huge = RunText(Broadcast("1048576,1048576,2"), {one});  // 2^41 elements
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted) << huge.status();
  EXPECT_NE(std::string(huge.status().message())
                .find("instruction b of shape f32[1048576,1048576,2] needs a buffer of more than 2^40 elements"),
            std::string::npos)
      << huge.status();
}

}  // namespace
}  // namespace hlox::rt
