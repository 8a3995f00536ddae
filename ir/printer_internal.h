// Internal helpers shared by the printer's files (printer.cc, printer_attributes.cc,
// printer_value_attributes.cc).
#pragma once

#include <string>

#include "ir/instruction.h"

namespace hlox::printer_internal {

// Appends ", key=value" for every typed attribute `instr` carries (non-default values, plus
// those its opcode always prints), in one fixed canonical order.
void AppendTypedAttributes(const Instruction& instr, std::string* out);
// Appends the called-computation attributes (to_apply=, condition=/body=, calls=, ...).
void AppendCalledComputations(const Instruction& instr, std::string* out);
// Appends ", statistics={...}" and ", origin={...}" when `instr` carries them
// (printer_value_attributes.cc).
void AppendValueAttributes(const Instruction& instr, std::string* out);
// Escapes bytes as a C string body (\" \\ \n \t, octal for other non-printables).
std::string CEscape(const std::string& bytes);

}  // namespace hlox::printer_internal
