// Graph features for learning agents, in the spirit of HloEnv's: one row per instruction
// (node) and one per operand edge, plus which nodes anchor decision sites. Exported as JSON
// and as flat arrays (row-major float matrices and an int64 edge index) that a Python
// binding can wrap as numpy arrays without copying.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/module.h"
#include "passes/pass.h"
#include "passes/pipeline.h"

namespace hlox {

// Shape dimensions beyond this rank are dropped from the padded dims columns.
inline constexpr int kFeatureMaxRank = 6;

struct GraphFeatures {
  // Nodes: every instruction of every computation, computations in module order, instructions
  // in post order. node_names[i] = "<computation>/<instruction>".
  std::vector<std::string> node_names;
  std::vector<std::string> computations;
  std::vector<std::string> node_columns;   // names of the node feature columns
  std::vector<float> node_features;        // node_count x node_columns.size(), row-major
  // Edges: operand -> user. edge_index holds 2 x E values: all sources, then all targets.
  std::vector<int64_t> edge_index;
  std::vector<std::string> edge_columns;
  std::vector<float> edge_features;        // edge_count x edge_columns.size(), row-major
  // Node index of each site's anchor instruction (-1 when not found), in site order.
  std::vector<int64_t> site_nodes;

  int64_t node_count() const { return static_cast<int64_t>(node_names.size()); }
  int64_t edge_count() const { return static_cast<int64_t>(edge_index.size() / 2); }
};

// Features of `module` with `sites` (from one pass's FindSites, may be empty) marked.
GraphFeatures ExtractGraphFeatures(const Module& module, const std::vector<DecisionSite>& sites);
// JSON: {"node_columns":[...], "nodes":[{"name":..,"features":[..]}], "edge_columns":[...],
// "edges":[{"src":i,"dst":j,"features":[..]}], "site_nodes":[...]}.
std::string GraphFeaturesToJson(const GraphFeatures& features);
// JSON array of sites: index, id, rule, computation, instructions, choices, default, features.
std::string SitesToJson(const std::vector<DecisionSite>& sites);
// JSON object of one decision point: {"key", "pass", "decided", "sites": SitesToJson}; what
// `hlox sites --json` prints (plus its pipeline) and one entry of DecisionPointsToJson.
std::string DecisionPointToJson(const DecisionPointSites& point);
// JSON array of DecisionPointToJson objects: the "sites" field of a sites job's record.
std::string DecisionPointsToJson(const std::vector<DecisionPointSites>& points);

}  // namespace hlox
