// Threefry-2x32 and Philox-4x32 against published test vectors (Random123 / JAX's
// random_test), the cuda_threefry2x32 custom call, and rng / rng-bit-generator determinism,
// ranges and state advance.
#include <cmath>

#include "kernel_test_util.h"
#include "runtime/kernels/rng_core.h"

namespace hlox::rt::testing {
namespace {

TEST(RngCore, ThreefryKnownVectors) {
  EXPECT_EQ(Threefry2x32(0, 0, 0, 0), (std::array<uint32_t, 2>{0x6b200159u, 0x99ba4efeu}));
  EXPECT_EQ(Threefry2x32(~0u, ~0u, ~0u, ~0u), (std::array<uint32_t, 2>{0x1cb996fcu, 0xbb002be7u}));
  EXPECT_EQ(Threefry2x32(0x13198a2eu, 0x03707344u, 0x243f6a88u, 0x85a308d3u),
            (std::array<uint32_t, 2>{0xc4923a9cu, 0x483df7a0u}));
}

TEST(RngCore, PhiloxKnownVectors) {
  EXPECT_EQ(Philox4x32({0, 0, 0, 0}, 0, 0), (std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(Philox4x32({~0u, ~0u, ~0u, ~0u}, ~0u, ~0u),
            (std::array<uint32_t, 4>{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
}

TEST(CustomCallThreefry, MatchesVectorsWithBroadcastKeys) {
  auto instr = Instruction::Create(Opcode::kCustomCall,
                                   Shape::Tuple({Shape(PrimitiveType::kU32, {2}), Shape(PrimitiveType::kU32, {2})}), {});
  instr->attrs().custom_call_target = "cuda_threefry2x32";
  Value got = RunKernel(&CustomCallKernel, *instr,
                        {MakeBuffer(Shape(PrimitiveType::kU32, {1}), {0x13198a2e}), MakeBuffer(Shape(PrimitiveType::kU32, {1}), {0x03707344}),
                         MakeBuffer(Shape(PrimitiveType::kU32, {2}), {0x243f6a88, 0}), MakeBuffer(Shape(PrimitiveType::kU32, {2}), {0x85a308d3, 0})});
  ASSERT_TRUE(got.is_tuple);
  EXPECT_EQ(got.tuple[0].array->as<uint32_t>()[0], 0xc4923a9cu);
  EXPECT_EQ(got.tuple[1].array->as<uint32_t>()[0], 0x483df7a0u);
  auto ref = Threefry2x32(0x13198a2eu, 0x03707344u, 0, 0);
  EXPECT_EQ(got.tuple[0].array->as<uint32_t>()[1], ref[0]);
}

TEST(RngKernel, UniformNormalDeterministicAndInRange) {
  auto instr = Instruction::Create(Opcode::kRng, Shape(PrimitiveType::kF32, {10000}), {});
  instr->set_name("rng.1");
  instr->attrs().distribution = RandomDistribution::kUniform;
  std::vector<BufferPtr> args{MakeBuffer(Shape(PrimitiveType::kF32, {}), {-1}), MakeBuffer(Shape(PrimitiveType::kF32, {}), {3})};
  Value a = RunKernel(&RngKernel, *instr, args, 1);
  Value b = RunKernel(&RngKernel, *instr, args, 2);
  EXPECT_EQ(std::memcmp(a.array->data(), b.array->data(), a.array->byte_size()), 0);
  double mean = 0;
  for (double v : Doubles(*a.array)) {
    EXPECT_GE(v, -1);
    EXPECT_LT(v, 3);
    mean += v / 10000;
  }
  EXPECT_NEAR(mean, 1.0, 0.05);
  instr->attrs().distribution = RandomDistribution::kNormal;
  Value n = RunKernel(&RngKernel, *instr, {MakeBuffer(Shape(PrimitiveType::kF32, {}), {2}), MakeBuffer(Shape(PrimitiveType::kF32, {}), {0.5})});
  double m1 = 0, m2 = 0;
  for (double v : Doubles(*n.array)) {
    m1 += v / 10000;
    m2 += v * v / 10000;
  }
  EXPECT_NEAR(m1, 2.0, 0.03);
  EXPECT_NEAR(std::sqrt(m2 - m1 * m1), 0.5, 0.03);
  auto ints = Instruction::Create(Opcode::kRng, Shape(PrimitiveType::kS32, {1000}), {});
  ints->attrs().distribution = RandomDistribution::kUniform;
  Value iv = RunKernel(&RngKernel, *ints, {MakeBuffer(Shape(PrimitiveType::kS32, {}), {3}), MakeBuffer(Shape(PrimitiveType::kS32, {}), {7})});
  for (double v : Doubles(*iv.array)) {
    EXPECT_GE(v, 3);
    EXPECT_LT(v, 7);
  }
}

TEST(RngBitGenerator, ThreefryAndPhiloxStreams) {
  for (const char* alg : {"rng_three_fry", "rng_philox", "rng_default"}) {
    auto instr = Instruction::Create(Opcode::kRngBitGenerator,
                                     Shape::Tuple({Shape(PrimitiveType::kU64, {2}), Shape(PrimitiveType::kU32, {3, 5})}), {});
    instr->attrs().rng_algorithm = alg;
    auto state = std::make_shared<Buffer>(Shape(PrimitiveType::kU64, {2}));
    state->as<uint64_t>()[0] = 0x0370734413198a2eull;
    state->as<uint64_t>()[1] = 5;
    Value got = RunKernel(&RngKernel, *instr, {state}, 2);
    ASSERT_TRUE(got.is_tuple);
    const uint32_t* bits = got.tuple[1].array->as<uint32_t>();
    const uint64_t* ns = got.tuple[0].array->as<uint64_t>();
    EXPECT_EQ(ns[0], state->as<uint64_t>()[0]);
    if (std::string(alg) == "rng_three_fry") {
      auto r = Threefry2x32(0x13198a2eu, 0x03707344u, 5, 0);
      EXPECT_EQ(bits[0], r[0]);
      EXPECT_EQ(bits[1], r[1]);
      EXPECT_EQ(ns[1], 5u + 8u);  // 15 words -> 8 blocks of 2
    } else {
      auto r = Philox4x32({5, 0, 0, 0}, 0x13198a2eu, 0x03707344u);
      EXPECT_EQ(bits[0], r[0]);
      EXPECT_EQ(bits[3], r[3]);
      EXPECT_EQ(ns[1], 5u + 4u);  // 15 words -> 4 blocks of 4
    }
  }
}

}  // namespace
}  // namespace hlox::rt::testing
