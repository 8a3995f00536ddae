// Helpers for runtime tests: parse HLO text, build input arrays from generator functions, run a
// module, and read results back as doubles.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "runtime/core/executor.h"

namespace hlox::rt::testing {

// Parses `text` (fails the test on error; returns nullptr then).
std::unique_ptr<Module> ParseOrFail(const std::string& text);
// Runs the entry computation of `text` on args with `threads` threads.
absl::StatusOr<Value> RunText(const std::string& text, const std::vector<Value>& args, int threads = 1,
                              uint64_t seed = 0);
// An array of `shape` whose element i is gen(i) (converted with the type's rounding).
Value MakeArray(const Shape& shape, const std::function<double(int64_t)>& gen);
// Shape from text such as "f32[2,3]".
Shape S(const std::string& text);
// Elements of an array value as doubles (real part for complex).
std::vector<double> ToDoubles(const Value& v);
// Element i of an array value as int64 (integers and pred).
std::vector<int64_t> ToInts(const Value& v);
// A small deterministic generator of doubles in [lo, hi).
std::function<double(int64_t)> Uniform(uint64_t seed, double lo, double hi);
// Value rounded through an element type (what storing `x` in that type gives back).
double RoundTo(PrimitiveType t, double x);

}  // namespace hlox::rt::testing
