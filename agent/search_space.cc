// Building a search space from a pipeline's sequence of decision points.
#include "agent/search_space.h"

#include <unordered_map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "passes/features.h"
#include "passes/pipeline.h"

namespace hlox {

PipelineDecisions SearchSpace::Decisions(const DecisionVector& v) const {
  if (!joint()) {
    PipelineDecisions d = fixed;
    d[key] = v;
    return d;
  }
  // Re-list every part on the candidate's own module: run the pipeline (passes only) with a
  // policy that carries the candidate's choices over by site id and choice name.
  auto policy = [&](const std::string& k, const Module&, const std::vector<DecisionSite>& now) -> DecisionVector {
    auto f = fixed.find(k);
    if (f != fixed.end() && f->second.size() == now.size()) return f->second;
    DecisionVector out = DefaultDecisions(now);
    for (const Part& part : parts) {
      if (part.key != k) continue;
      std::unordered_map<std::string, int64_t> listed;
      for (int64_t i = part.begin; i < part.end; ++i) listed.emplace(sites[i].id, i);
      for (size_t j = 0; j < now.size(); ++j) {
        auto it = listed.find(now[j].id);
        if (it == listed.end() || it->second >= static_cast<int64_t>(v.size())) continue;
        const DecisionSite& was = sites[it->second];
        const int32_t c = v[it->second];
        if (c < 0 || c >= static_cast<int32_t>(was.choices.size())) continue;
        for (size_t n = 0; n < now[j].choices.size(); ++n) {
          if (now[j].choices[n] == was.choices[c]) out[j] = static_cast<int32_t>(n);
        }
      }
    }
    return out;
  };
  PipelineDecisions used;
  if (!RunPipelineWithPolicy(*module, pipeline, policy, &used).ok()) {
    // Cannot happen for a module the space was built on; the worker then reports the
    // invalid decisions rather than this process guessing.
    PipelineDecisions d = fixed;
    d[parts.front().key] = DecisionVector(v.begin() + parts.front().begin, v.begin() + parts.front().end);
    return d;
  }
  return used;
}

absl::StatusOr<SearchSpace> BuildSearchSpace(const Module& module, const std::string& pipeline,
                                             const std::string& key_hint) {
  const std::vector<std::string> wanted_parts = absl::StrSplit(key_hint, '+', absl::SkipEmpty());
  const bool joint = wanted_parts.size() > 1;
  PipelineDecisions decided;
  std::optional<SearchSpace> largest;
  SearchSpace joined;
  joined.pipeline = pipeline;
  size_t next_part = 0;
  // Each iteration decides one more invocation with its defaults; the cap guards fixpoints.
  for (int step = 0; step < 256; ++step) {
    HLOX_ASSIGN_OR_RETURN(std::optional<DecisionPoint> point, NextDecisionPoint(module, pipeline, decided));
    if (!point) break;
    SearchSpace space;
    space.pipeline = pipeline;
    space.fixed = decided;
    space.key = point->key;
    space.sites = point->sites;
    space.defaults = DefaultDecisions(point->sites);
    if (joint) {
      if (next_part == 0) joined.fixed = decided;
      if (absl::StartsWith(point->key, wanted_parts[next_part])) {
        SearchSpace::Part part{point->key, joined.size(), joined.size() + space.size()};
        joined.parts.push_back(part);
        joined.sites.insert(joined.sites.end(), space.sites.begin(), space.sites.end());
        joined.defaults.insert(joined.defaults.end(), space.defaults.begin(), space.defaults.end());
        if (++next_part == wanted_parts.size()) break;
      }
      decided[point->key] = space.defaults;
      continue;
    }
    space.features = ExtractGraphFeatures(*point->module, point->sites);
    bool wanted = key_hint.empty() ? absl::StartsWith(space.key, "fusion")
                                   : absl::StartsWith(space.key, key_hint);
    if (wanted) return space;
    if (!largest || space.size() > largest->size()) largest = space;
    decided[point->key] = space.defaults;
  }
  if (joint) {
    if (next_part < wanted_parts.size()) {
      return absl::NotFoundError(absl::StrCat("pipeline ", pipeline, " has no decision point matching '",
                                              wanted_parts[next_part], "' after the earlier parts of '", key_hint,
                                              "'"));
    }
    std::vector<std::string> keys;
    for (const SearchSpace::Part& p : joined.parts) keys.push_back(p.key);
    joined.key = absl::StrJoin(keys, "+");
    joined.module = std::shared_ptr<const Module>(module.Clone());
    // Graph features of the module at the first part, with every joint site placed on its
    // anchor where that instruction exists there (later parts' new fusions have no node).
    HLOX_ASSIGN_OR_RETURN(std::optional<DecisionPoint> first,
                          NextDecisionPoint(module, pipeline, joined.fixed));
    if (first) joined.features = ExtractGraphFeatures(*first->module, joined.sites);
    return joined;
  }
  if (!key_hint.empty()) {
    return absl::NotFoundError(absl::StrCat("pipeline ", pipeline, " has no decision point matching '",
                                            key_hint, "'"));
  }
  if (!largest) return absl::NotFoundError(absl::StrCat("pipeline ", pipeline, " exposes no decision sites"));
  return *largest;
}

}  // namespace hlox
