// Finiteness of runtime values: NaN and Inf counts and the largest finite magnitude, for
// `hlox run --check-finite`, the finite-output corpus test and the corpus bench.
#pragma once

#include <cstdint>

#include "runtime/core/value.h"

namespace hlox::rt {

// NaN and Inf counts of array leaves (integer and pred leaves are always finite) and their
// largest finite magnitude (shows overflow: f16 tops out at 65504).
struct NonFinite {
  int64_t nan = 0, inf = 0;
  double max_abs = 0;
  bool any() const { return nan + inf > 0; }
};

// Counts over one array leaf (complex leaves count both parts; f16/bf16 by their bits).
NonFinite CountNonFinite(const Buffer& b);
// Counts over every leaf of `v`; max_abs is the largest over the leaves.
NonFinite CountNonFinite(const Value& v);

}  // namespace hlox::rt
