// What the tests of XLA's passes (passes/xla/, tests/passes/xla_passes*_test.cc) share: run a pass
// on HLO text with given decisions and check that the result verifies, prints and parses back,
// keeps the entry's result shape and computes what the input computed on seeded inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace hlox::testing {

struct PassCheck {
  double scale = 1.0;                 // times the usual output tolerances
  std::vector<uint64_t> seeds = {5};  // seeded inputs the outputs are compared on
};

// The printed module after `label` runs on `text` with `decisions` for its one decision point
// (nullptr: the pass's default policy), then DCE; "" (and a test failure) when a check fails.
std::string RunChecked(const std::string& label, const std::string& text, const DecisionVector* decisions,
                       const PassCheck& check = {});

struct PassOutcome {
  std::vector<std::string> rules;  // the sites' rules, in order
  std::vector<int> defaults;       // the sites' default choices, in order
  std::string after;               // RunChecked with choice 1 at every site (no sites: the default)
};
PassOutcome ApplyAll(const std::string& label, const std::string& text, const PassCheck& check = {});

// RunChecked with the default policy.
std::string RunDefault(const std::string& label, const std::string& text, const PassCheck& check = {});

// How many sites `label` offers on `text` (0 when none).
size_t SiteCount(const std::string& label, const std::string& text);

bool Has(const std::string& text, const std::string& what);
int Count(const std::string& text, const std::string& what);  // occurrences of `what`

}  // namespace hlox::testing
