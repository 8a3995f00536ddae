// The simplifier's rule test table: for every rule a positive case (HLO where the rule must
// fire, and the expected structure of the entry root after applying only that rule's sites)
// and a negative case (HLO where the rule must not be offered). Shared by the structural tests
// and the seeded-execution equivalence test.
#pragma once

#include <string>
#include <vector>

namespace hlox::testing {

struct SimpCase {
  std::string rule;
  bool positive = true;
  std::string body;    // entry computation body (instruction lines)
  std::string expect;  // positive: Summary() of the entry root afterwards
};

// Every case. Modules are built by WrapEntry().
const std::vector<SimpCase>& SimpCases();
// A whole module: reducer computations (add_f32, add_s32, max_f32) and ENTRY e { body }.
std::string WrapEntry(const std::string& body);

}  // namespace hlox::testing
