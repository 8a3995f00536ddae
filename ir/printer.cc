// Canonical HLO text: the module header with its attributes, computations in text order
// (ENTRY marked, signature when the source had one), one instruction per line with '%'-prefixed
// names and untyped operands, typed attributes, called computations, control predecessors,
// statistics and origin,
// then raw attributes in their original order, and the trailing tables verbatim.
#include "ir/printer.h"

#include "absl/strings/str_cat.h"
#include "ir/printer_internal.h"

namespace hlox {

std::string PrintInstruction(const Instruction& instr, const PrintOptions& options) {
  std::string out;
  absl::StrAppend(&out, "%", instr.name(), " = ", instr.shape().ToString(), " ", std::string(OpcodeName(instr.opcode())),
                  "(");
  if (instr.opcode() == Opcode::kParameter) {
    absl::StrAppend(&out, instr.parameter_number());
  } else if (instr.opcode() == Opcode::kConstant && instr.has_literal()) {
    const Literal& lit = instr.literal();
    if (!options.print_large_constants && lit.shape().IsArray() && lit.element_count() > 16) {
      out += "{...}";
    } else {
      out += PrintLiteral(lit);
    }
  } else {
    for (int64_t i = 0; i < instr.operand_count(); ++i) {
      if (i) out += ", ";
      absl::StrAppend(&out, "%", instr.operand(i)->name());
    }
  }
  out += ")";
  printer_internal::AppendTypedAttributes(instr, &out);
  printer_internal::AppendCalledComputations(instr, &out);
  if (!instr.control_predecessors().empty()) {
    out += ", control-predecessors={";
    for (size_t i = 0; i < instr.control_predecessors().size(); ++i) {
      if (i) out += ", ";
      absl::StrAppend(&out, "%", instr.control_predecessors()[i]->name());
    }
    out += "}";
  }
  printer_internal::AppendValueAttributes(instr, &out);
  for (const RawAttribute& a : instr.raw_attributes()) {
    if (!options.print_metadata && a.key == "metadata") continue;
    absl::StrAppend(&out, ", ", a.key, "=", a.value);
  }
  return out;
}

std::string PrintComputation(const Computation& computation, const PrintOptions& options) {
  std::string out;
  if (computation.IsEntry()) out += "ENTRY ";
  absl::StrAppend(&out, "%", computation.name());
  if (computation.header_result()) {
    out += " (";
    for (size_t i = 0; i < computation.header_params().size(); ++i) {
      const auto& [name, shape] = computation.header_params()[i];
      if (i) out += ", ";
      absl::StrAppend(&out, name, ": ", shape.ToString());
    }
    absl::StrAppend(&out, ") -> ", computation.header_result()->ToString());
  }
  out += " {\n";
  for (const auto& instr : computation.instructions()) {
    out += "  ";
    if (instr.get() == computation.root()) out += "ROOT ";
    out += PrintInstruction(*instr, options);
    out += "\n";
  }
  out += "}";
  if (!computation.execution_thread().empty()) {
    absl::StrAppend(&out, ", execution_thread=\"", printer_internal::CEscape(computation.execution_thread()), "\"");
  }
  out += "\n";
  return out;
}

std::string PrintModule(const Module& module, const PrintOptions& options) {
  std::string out = absl::StrCat("HloModule ", module.name());
  for (const RawAttribute& a : module.header_attributes()) absl::StrAppend(&out, ", ", a.key, "=", a.value);
  out += "\n";
  for (const auto& comp : module.computations()) {
    out += "\n";
    out += PrintComputation(*comp, options);
  }
  if (!module.trailer().empty()) absl::StrAppend(&out, "\n", module.trailer(), "\n");
  return out;
}

}  // namespace hlox
