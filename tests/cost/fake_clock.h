// A deterministic clock for protocol tests: workloads advance it by chosen amounts, so the
// protocol's stopping rules and statistics are checked without depending on wall time.
#pragma once

#include <random>

namespace hlox::testing {

struct FakeClock {
  double now = 0;
  double operator()() const { return now; }
  void Advance(double s) { now += s; }
};

}  // namespace hlox::testing
