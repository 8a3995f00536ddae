// Helpers for the kernel-family tests: seeded random buffers of any real type, buffers from
// and to doubles, running a kernel with a 1- or 2-thread pool, and building small scalar
// computations (reducers, comparators) inside a module.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "ir/module.h"
#include "runtime/core/kernel.h"
#include "runtime/kernels/scalar_access.h"

namespace hlox::rt::testing {

// A buffer of `shape` filled with values from `v` (converted with the type's rounding).
BufferPtr MakeBuffer(const Shape& shape, const std::vector<double>& v);
// A buffer of random values: floats uniform in [-2, 2), ints in [lo, hi].
BufferPtr RandomBuffer(const Shape& shape, std::mt19937_64& rng, int64_t lo = -5, int64_t hi = 5);
// All elements as doubles.
std::vector<double> Doubles(const Buffer& b);

// Runs `kernel` on `instr` with `threads` threads; fails the test on error.
Value RunKernel(KernelFn kernel, const Instruction& instr, const std::vector<BufferPtr>& args,
                int threads = 1);
absl::StatusOr<Value> TryKernel(KernelFn kernel, const Instruction& instr,
                                const std::vector<BufferPtr>& args, int threads = 1);

// A scalar computation (p0, p1) -> op(p0, p1) of type t, added to `module`.
Computation* BinaryComputation(Module& module, Opcode op, PrimitiveType t);
// A comparator (p0..p{2n-1}) -> compare(p0, p1, dir[, type]) of types `types` (one per operand).
Computation* CompareComputation(Module& module, const std::vector<PrimitiveType>& types,
                                ComparisonDirection dir, const std::string& type = "");

// Max |a - b| / (atol + rtol |b|) over elements (<= 1 means close).
double CloseRatio(const std::vector<double>& a, const std::vector<double>& b, double atol, double rtol);

}  // namespace hlox::rt::testing

#define EXPECT_ALL_CLOSE(a, b, atol, rtol)                                         \
  do {                                                                             \
    auto _a = (a);                                                                 \
    auto _b = (b);                                                                 \
    ASSERT_EQ(_a.size(), _b.size());                                               \
    EXPECT_LE(::hlox::rt::testing::CloseRatio(_a, _b, atol, rtol), 1.0);           \
  } while (0)
