// Helpers for the fusion tests: run a module on seeded inputs and compare outputs of two
// runs with dtype-aware tolerances (an independent check, not the code under test).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "runtime/core/value.h"

namespace hlox::testing {

// Runs `module` on MakeSeededInputs(module, seed) with `threads` threads.
absl::StatusOr<rt::Value> RunSeeded(const Module& module, uint64_t seed, int threads = 1);
// "" when `a` and `b` agree (floats within rtol*scale, ints exactly); else the first difference.
std::string CompareValues(const rt::Value& expected, const rt::Value& actual, double scale = 1.0);

}  // namespace hlox::testing
