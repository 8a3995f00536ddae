// Python view of the passes: pipeline names, decision points with their sites, applying a
// decisions dict, graph features as NumPy arrays for GNNs, and pass-ordering actions.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "passes/features.h"
#include "passes/pass.h"
#include "passes/pass_order.h"
#include "passes/pipeline.h"
#include "python/src/bindings.h"

namespace hlox::py {

namespace {

pyb::dict SiteToDict(const DecisionSite& site, size_t index) {
  pyb::dict d;
  d["index"] = index;
  d["id"] = site.id;
  d["rule"] = site.rule;
  d["instructions"] = site.instructions;
  d["computation"] = site.computation;
  d["choices"] = site.choices;
  d["default"] = site.default_choice;
  d["features"] = site.features;
  return d;
}

template <typename T>
pyb::array_t<T> Matrix(const std::vector<T>& flat, int64_t rows, int64_t cols) {
  pyb::array_t<T> out({rows, cols});
  if (!flat.empty()) std::memcpy(out.mutable_data(), flat.data(), flat.size() * sizeof(T));
  return out;
}

// Graph features (nodes, edges, sites marked) plus a padded site feature matrix.
pyb::dict FeaturesToDict(const Module& module, const std::vector<DecisionSite>& sites) {
  GraphFeatures f = ExtractGraphFeatures(module, sites);
  const int64_t n = f.node_count(), e = f.edge_count();
  pyb::dict d;
  d["node_features"] = Matrix(f.node_features, n, static_cast<int64_t>(f.node_columns.size()));
  d["edge_index"] = Matrix(f.edge_index, 2, e);
  d["edge_features"] = Matrix(f.edge_features, e, static_cast<int64_t>(f.edge_columns.size()));
  d["site_nodes"] = pyb::array_t<int64_t>(static_cast<pyb::ssize_t>(f.site_nodes.size()),
                                          f.site_nodes.data());
  size_t width = 0;
  for (const auto& s : sites) width = std::max(width, s.features.size());
  std::vector<float> site_feats(sites.size() * width, 0.0f);
  std::vector<int64_t> choices(sites.size()), defaults(sites.size());
  for (size_t i = 0; i < sites.size(); ++i) {
    std::copy(sites[i].features.begin(), sites[i].features.end(), site_feats.begin() + i * width);
    choices[i] = static_cast<int64_t>(sites[i].choices.size());
    defaults[i] = sites[i].default_choice;
  }
  d["site_features"] = Matrix(site_feats, static_cast<int64_t>(sites.size()), static_cast<int64_t>(width));
  d["site_choices"] = pyb::array_t<int64_t>(static_cast<pyb::ssize_t>(choices.size()), choices.data());
  d["site_defaults"] = pyb::array_t<int64_t>(static_cast<pyb::ssize_t>(defaults.size()), defaults.data());
  d["node_columns"] = f.node_columns;
  d["edge_columns"] = f.edge_columns;
  d["node_names"] = f.node_names;
  return d;
}

PipelineDecisions ToDecisions(const std::map<std::string, std::vector<int32_t>>& in) {
  return PipelineDecisions(in.begin(), in.end());
}

// {key, module, sites, features} of the next undecided invocation, or None when finished.
pyb::object NextPoint(const ModulePtr& module, const std::string& pipeline,
                      const std::map<std::string, std::vector<int32_t>>& decisions) {
  std::optional<DecisionPoint> point;
  {
    pyb::gil_scoped_release release;
    auto r = NextDecisionPoint(*module, pipeline, ToDecisions(decisions));
    if (!r.ok()) {
      pyb::gil_scoped_acquire acquire;
      ThrowStatus(r.status());
    }
    point = std::move(*r);
  }
  if (!point) return pyb::none();
  pyb::dict d;
  d["key"] = point->key;
  pyb::list sites;
  for (size_t i = 0; i < point->sites.size(); ++i) sites.append(SiteToDict(point->sites[i], i));
  d["sites"] = sites;
  d["features"] = FeaturesToDict(*point->module, point->sites);
  d["module"] = ModulePtr(std::move(point->module));
  return d;
}

ModulePtr Apply(const ModulePtr& module, const std::string& pipeline,
                const std::map<std::string, std::vector<int32_t>>& decisions) {
  absl::StatusOr<std::unique_ptr<Module>> out;
  {
    pyb::gil_scoped_release release;
    out = RunPipeline(*module, pipeline, ToDecisions(decisions));
  }
  return ModulePtr(Unwrap(std::move(out)));
}

pyb::tuple PassOrderAction(const ModulePtr& module, int action) {
  PassOrderStep step = Unwrap(PassOrderApply(*module, action));
  return pyb::make_tuple(ModulePtr(std::move(step.module)), step.reward, step.op_count, step.done);
}

}  // namespace

void BindPasses(pyb::module_& m) {
  using Decisions = std::map<std::string, std::vector<int32_t>>;
  m.def("pipelines", &PipelineNames, "Names of the built-in pipelines.");
  m.def("pass_labels", &PassLabels, "Pass labels usable in only:<pass> and pass ordering.");
  m.def("next_decision_point", &NextPoint, pyb::arg("module"), pyb::arg("pipeline") = "default",
        pyb::arg("decisions") = Decisions{},
        "Runs the pipeline up to the first invocation with sites not in `decisions`; returns "
        "{key, sites, features, module} or None when every invocation is decided.");
  m.def("apply_decisions", &Apply, pyb::arg("module"), pyb::arg("pipeline") = "default",
        pyb::arg("decisions") = Decisions{},
        "RunPipeline with {'fusion#0': [..]}; ValueError('INVALID_DECISIONS: ..') on bad vectors.");
  m.def("graph_features", [](const ModulePtr& module) { return FeaturesToDict(*module, {}); },
        pyb::arg("module"), "node_features f32[N,F], edge_index i64[2,E], edge_features, names.");
  m.def("pass_order_menu", &PassOrderMenu, "Pass-ordering actions: pass labels, aggressive fusion variants ('<label>:all'), then 'stop'.");
  m.def("pass_order_apply", &PassOrderAction, pyb::arg("module"), pyb::arg("action"),
        "Applies one menu action: (module, reward = op-count reduction, op_count, done).");
}

}  // namespace hlox::py
