// Canonical HLO text for modules, computations and instructions. print(parse(x)) re-parses to
// the same module; printing is deterministic.
#pragma once

#include <string>

#include "ir/module.h"

namespace hlox {

struct PrintOptions {
  bool print_metadata = true;     // metadata={...} raw attributes
  bool print_large_constants = true;  // false prints constants over 16 elements as {...}
};

std::string PrintModule(const Module& module, const PrintOptions& options = {});
std::string PrintComputation(const Computation& computation, const PrintOptions& options = {});
// One instruction line without indentation or trailing newline.
std::string PrintInstruction(const Instruction& instr, const PrintOptions& options = {});
std::string PrintLiteral(const Literal& literal);

}  // namespace hlox
