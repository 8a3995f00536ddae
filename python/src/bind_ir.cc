// Python view of the IR: the Module class (text, name, counts, computations, clone) and the
// parse / load / print / verify functions.
#include <pybind11/stl.h>

#include "cost/module_hash.h"
#include "ir/computation.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/module_util.h"
#include "python/src/bindings.h"

namespace hlox::py {

namespace {

ModulePtr Parse(const std::string& text, const std::string& filename) {
  return ModulePtr(Unwrap(ParseModule(text, filename)));
}

std::vector<std::string> ComputationNames(const Module& module) {
  std::vector<std::string> names;
  for (const auto& c : module.computations()) names.push_back(c->name());
  return names;
}

}  // namespace

void BindIr(pyb::module_& m) {
  pyb::class_<Module, ModulePtr>(m, "Module", "A parsed HLO module (immutable from Python).")
      .def_property_readonly("name", &Module::name)
      .def_property_readonly("text", [](const Module& mod) { return PrintModule(mod); },
                             "Canonical HLO text.")
      .def_property_readonly("instruction_count", &Module::InstructionCount)
      .def_property_readonly("op_count", [](const Module& mod) { return OpCount(mod); },
                             "Instructions that do work (no parameters/constants).")
      .def_property_readonly("computations", &ComputationNames)
      .def_property_readonly("entry", [](const Module& mod) {
        return mod.entry() ? mod.entry()->name() : std::string();
      })
      .def_property_readonly("hash", [](const Module& mod) { return ModuleHash(mod); })
      .def("clone", [](const Module& mod) { return ModulePtr(mod.Clone()); })
      .def("verify", [](const Module& mod) { Check(VerifyModule(mod)); },
           "Raises ValueError when the module is structurally invalid.")
      .def("is_valid", [](const Module& mod) { return VerifyModule(mod).ok(); })
      .def("__str__", [](const Module& mod) { return PrintModule(mod); })
      .def("__repr__", [](const Module& mod) {
        return "<hlox.Module " + mod.name() + " (" + std::to_string(mod.InstructionCount()) +
               " instructions)>";
      });

  m.def("parse_module", &Parse, pyb::arg("text"), pyb::arg("filename") = "<input>",
        "Parses HLO text; ValueError with file:line:col on bad text.");
  m.def("load_module", [](const std::string& path) { return ModulePtr(Unwrap(ParseModuleFile(path))); },
        pyb::arg("path"), "Reads and parses an .hlo file.");
  m.def("print_module", [](const Module& mod, bool metadata) {
        PrintOptions options;
        options.print_metadata = metadata;
        return PrintModule(mod, options);
      }, pyb::arg("module"), pyb::arg("metadata") = true);
  m.def("hash_text", [](const std::string& text) { return HashText(text); }, pyb::arg("text"),
        "The protocol's content hash of a module text (cost/module_hash.h).");
  m.def("verify", [](const Module& mod) {
        absl::Status s = VerifyModule(mod);
        return s.ok() ? std::string() : std::string(s.message());
      }, pyb::arg("module"), "'' when the module verifies, else the verifier's message.");
}

}  // namespace hlox::py
