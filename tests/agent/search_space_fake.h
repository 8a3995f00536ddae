// A synthetic decision point for agent tests: `n` fusion sites "fuse:n<i>" with choices
// {keep, fuse}, all defaulting to `default_choice`, on the fusion-only pipeline.
#pragma once

#include <string>

#include "agent/search_space.h"

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

}  // namespace hlox::testing
