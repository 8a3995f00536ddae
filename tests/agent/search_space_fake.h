// Fakes for agent tests: a synthetic decision point of `n` fusion sites "fuse:n<i>" with
// choices {keep, fuse}, all defaulting to `default_choice`, on the fusion-only pipeline, and
// the record a fake evaluator returns for one run of cost `c`.
#pragma once

#include <string>

#include "agent/search_space.h"
#include "cost/result.h"

namespace hlox::testing {

inline SearchSpace KeepOrFuseSpace(int n, int default_choice = 0) {
  SearchSpace s;
  s.pipeline = "fusion-only";
  s.key = "fusion#0";
  for (int i = 0; i < n; ++i) {
    DecisionSite site;
    site.id = "fuse:n" + std::to_string(i);
    site.choices = {"keep", "fuse"};
    s.sites.push_back(site);
    s.defaults.push_back(default_choice);
  }
  return s;
}

inline ResultRecord CostRecord(double c) {
  ResultRecord r;
  r.cost.median = c;
  r.cost.samples = {c};
  return r;
}

}  // namespace hlox::testing
