// Node/edge feature extraction and its JSON form.
#include "passes/features.h"

#include <map>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace hlox {
namespace {

void AppendShapeColumns(const Shape& s, std::vector<float>& row) {
  row.push_back(static_cast<float>(static_cast<int>(s.element_type())));
  row.push_back(static_cast<float>(s.IsArray() ? s.rank() : -1));
  for (int d = 0; d < kFeatureMaxRank; ++d) {
    row.push_back(s.IsArray() && d < s.rank() ? static_cast<float>(s.dim(d)) : 0.0f);
  }
  row.push_back(static_cast<float>(s.IsArray() ? s.ElementCount() : 0));
  row.push_back(static_cast<float>(s.ByteSize()));
}

std::vector<std::string> ShapeColumnNames() {
  std::vector<std::string> c = {"dtype", "rank"};
  for (int d = 0; d < kFeatureMaxRank; ++d) c.push_back(absl::StrCat("dim", d));
  c.push_back("elements");
  c.push_back("bytes");
  return c;
}

}  // namespace

GraphFeatures ExtractGraphFeatures(const Module& module, const std::vector<DecisionSite>& sites) {
  GraphFeatures f;
  f.node_columns = {"opcode"};
  for (const std::string& c : ShapeColumnNames()) f.node_columns.push_back(c);
  for (const char* c : {"fan_in", "fan_out", "computation", "is_entry", "is_root", "is_site", "site_choices"}) {
    f.node_columns.push_back(c);
  }
  f.edge_columns = {"operand_index"};
  for (const std::string& c : ShapeColumnNames()) f.edge_columns.push_back(c);

  // Site anchors by (computation, instruction) name; the largest choice count wins if several.
  std::map<std::pair<std::string, std::string>, int64_t> site_choices;
  for (const DecisionSite& s : sites) {
    if (s.instructions.empty()) continue;
    int64_t& n = site_choices[{s.computation, s.instructions[0]}];
    n = std::max<int64_t>(n, static_cast<int64_t>(s.choices.size()));
  }
  std::unordered_map<const Instruction*, int64_t> node_of;
  std::vector<const Instruction*> nodes;
  for (size_t ci = 0; ci < module.computations().size(); ++ci) {
    const Computation& comp = *module.computations()[ci];
    f.computations.push_back(comp.name());
    for (const Instruction* i : comp.PostOrder()) {
      node_of[i] = static_cast<int64_t>(nodes.size());
      nodes.push_back(i);
      f.node_names.push_back(absl::StrCat(comp.name(), "/", i->name()));
      std::vector<float> row = {static_cast<float>(static_cast<int>(i->opcode()))};
      AppendShapeColumns(i->shape(), row);
      auto it = site_choices.find({comp.name(), i->name()});
      row.insert(row.end(), {static_cast<float>(i->operand_count()), static_cast<float>(i->user_count()),
                             static_cast<float>(ci), comp.IsEntry() ? 1.0f : 0.0f, i->IsRoot() ? 1.0f : 0.0f,
                             it != site_choices.end() ? 1.0f : 0.0f,
                             it != site_choices.end() ? static_cast<float>(it->second) : 0.0f});
      f.node_features.insert(f.node_features.end(), row.begin(), row.end());
    }
  }
  std::vector<int64_t> src, dst;
  for (const Instruction* i : nodes) {
    for (int64_t k = 0; k < i->operand_count(); ++k) {
      src.push_back(node_of.at(i->operand(k)));
      dst.push_back(node_of.at(i));
      std::vector<float> row = {static_cast<float>(k)};
      AppendShapeColumns(i->operand(k)->shape(), row);
      f.edge_features.insert(f.edge_features.end(), row.begin(), row.end());
    }
  }
  f.edge_index = src;
  f.edge_index.insert(f.edge_index.end(), dst.begin(), dst.end());
  std::map<std::pair<std::string, std::string>, int64_t> by_name;
  for (size_t n = 0; n < nodes.size(); ++n) by_name[{nodes[n]->parent()->name(), nodes[n]->name()}] = n;
  for (const DecisionSite& s : sites) {
    auto it = s.instructions.empty() ? by_name.end() : by_name.find({s.computation, s.instructions[0]});
    f.site_nodes.push_back(it == by_name.end() ? -1 : it->second);
  }
  return f;
}

std::string GraphFeaturesToJson(const GraphFeatures& f) {
  nlohmann::json j;
  j["node_columns"] = f.node_columns;
  j["edge_columns"] = f.edge_columns;
  j["computations"] = f.computations;
  size_t nc = f.node_columns.size(), ec = f.edge_columns.size();
  nlohmann::json nodes = nlohmann::json::array();
  for (int64_t n = 0; n < f.node_count(); ++n) {
    nodes.push_back({{"name", f.node_names[n]},
                     {"features", std::vector<float>(f.node_features.begin() + n * nc,
                                                     f.node_features.begin() + (n + 1) * nc)}});
  }
  j["nodes"] = nodes;
  nlohmann::json edges = nlohmann::json::array();
  int64_t e_count = f.edge_count();
  for (int64_t e = 0; e < e_count; ++e) {
    edges.push_back({{"src", f.edge_index[e]},
                     {"dst", f.edge_index[e_count + e]},
                     {"features", std::vector<float>(f.edge_features.begin() + e * ec,
                                                     f.edge_features.begin() + (e + 1) * ec)}});
  }
  j["edges"] = edges;
  j["site_nodes"] = f.site_nodes;
  return j.dump();
}

namespace {

nlohmann::json SitesJson(const std::vector<DecisionSite>& sites) {
  nlohmann::json arr = nlohmann::json::array();
  for (size_t k = 0; k < sites.size(); ++k) {
    const DecisionSite& s = sites[k];
    arr.push_back({{"index", k},
                   {"id", s.id},
                   {"rule", s.rule},
                   {"computation", s.computation},
                   {"instructions", s.instructions},
                   {"choices", s.choices},
                   {"default", s.default_choice},
                   {"features", s.features}});
  }
  return arr;
}

nlohmann::json PointJson(const DecisionPointSites& p) {
  return {{"key", p.key}, {"pass", p.pass}, {"decided", p.decided}, {"sites", SitesJson(p.sites)}};
}

}  // namespace

std::string SitesToJson(const std::vector<DecisionSite>& sites) { return SitesJson(sites).dump(); }

std::string DecisionPointToJson(const DecisionPointSites& point) { return PointJson(point).dump(); }

std::string DecisionPointsToJson(const std::vector<DecisionPointSites>& points) {
  nlohmann::json arr = nlohmann::json::array();
  for (const DecisionPointSites& p : points) arr.push_back(PointJson(p));
  return arr.dump();
}

}  // namespace hlox
