// Helpers shared by the fused-loop tests: seeded f32 inputs, compiling the computation named
// "fused" of a module text, and running a program on 1 and 2 threads with identical bits.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/core/thread_pool.h"
#include "runtime/core/value.h"
#include "runtime/fused/program.h"

namespace hlox::rt::testing {

// Floats in [-2, 2) from a linear congruential stream seeded by `seed`.
inline Value F32(std::vector<int64_t> dims, uint32_t seed) {
  auto b = std::make_shared<Buffer>(Shape(PrimitiveType::kF32, dims));
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < b->element_count(); ++i) {
    s = s * 1664525u + 1013904223u;
    b->as<float>()[i] = -2.0f + 4.0f * static_cast<float>(s >> 8) / 16777216.0f;
  }
  return Value::Array(b);
}

// An f32 scalar holding v.
inline Value Scalar(float v) {
  auto b = std::make_shared<Buffer>(Shape(PrimitiveType::kF32, {}));
  b->as<float>()[0] = v;
  return Value::Array(b);
}

// Parses `text` into *keep and compiles its computation "fused"; nullptr (and a test
// failure) on error.
inline std::unique_ptr<FusedProgram> Compile(const std::string& text, std::unique_ptr<Module>* keep) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return nullptr;
  *keep = std::move(*m);
  auto p = FusedProgram::Compile(*(*keep)->FindComputation("fused"), 1);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? std::move(*p) : nullptr;
}

// Runs with `block` on 1 thread and on a 2-thread pool; expects identical bits.
inline BufferPtr RunBoth(const FusedProgram& p, const std::vector<const Value*>& args, int64_t block) {
  FusedRunOptions opt;
  opt.block = block;
  opt.auto_block = false;
  auto one = p.Run(args, nullptr, opt);
  ThreadPool pool(2);
  auto two = p.Run(args, &pool, opt);
  EXPECT_TRUE(one.ok() && two.ok());
  if (!one.ok() || !two.ok()) return nullptr;
  EXPECT_EQ(0, std::memcmp(one->array->data(), two->array->data(), one->array->byte_size()));
  return one->array;
}

}  // namespace hlox::rt::testing
