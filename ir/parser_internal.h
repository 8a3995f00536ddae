// Internal interface of the HLO text parser, shared by parser.cc (module, computations,
// instructions), parser_shape.cc (shapes, layouts), parser_literal.cc (constants) and
// parser_attributes.cc (typed attributes). Not part of the public IR API; use ir/parser.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "ir/lexer.h"
#include "ir/module.h"

namespace hlox::parser_internal {

// Limits that keep hostile input from exhausting memory or the stack.
inline constexpr int kMaxShapeDepth = 64;
inline constexpr int64_t kMaxRank = 64;
inline constexpr int64_t kMaxElements = int64_t{1} << 40;
inline constexpr int64_t kMaxCallDepth = 1000;
inline constexpr int64_t kMaxComputations = 20000;
inline constexpr int64_t kMaxParameters = int64_t{1} << 20;

// A name written in the text, with where it was written (for error messages).
struct NameRef {
  std::string name;
  size_t pos = 0;
};

// An instruction parsed but not yet wired: operand, control-predecessor and computation names
// are resolved once the whole computation (operands) or file (computations) is read.
struct PendingInstr {
  std::unique_ptr<Instruction> instr;
  Instruction* raw = nullptr;
  size_t pos = 0;
  bool is_root = false;
  std::vector<NameRef> operands;
  std::vector<NameRef> control_preds;
  // (attribute key, computation names) in text order, e.g. {"condition", {cond}}.
  std::vector<std::pair<std::string, std::vector<NameRef>>> calls;
};

class Parser {
 public:
  Parser(std::string_view text, std::string_view filename) : lex_(text, filename) {}

  absl::StatusOr<std::unique_ptr<Module>> ParseModule();
  // Parses the whole text as one shape.
  absl::StatusOr<Shape> ParseShapeOnly();

  // parser_shape.cc
  absl::Status ParseShape(Shape* out, int depth = 0);
  absl::Status ParseLayout(Shape* shape);

  // parser_literal.cc: the literal inside constant(...), for the instruction's shape.
  absl::Status ParseLiteral(const Shape& shape, Literal* out);

  // parser_attributes.cc: one `key=value` after an instruction's operand list (the lexer is
  // just after '='). Typed keys fill instr attrs; the rest are kept raw.
  absl::Status ParseAttribute(std::string_view key, size_t key_pos, PendingInstr* p);

  Lexer& lex() { return lex_; }

 private:
  absl::Status ParseComputation(Module* module, bool* saw_entry);
  absl::Status ParseInstruction(PendingInstr* p);
  absl::Status ParseSignature(Computation* comp);
  absl::Status FinishComputation(Computation* comp, std::vector<PendingInstr>* instrs,
                                 size_t comp_pos);
  absl::Status ResolveCalls(Module* module);

  // parser_literal.cc helpers
  absl::Status ParseArrayLevel(Literal* lit, int64_t dim, int64_t* index);
  absl::Status ParseScalar(Literal* lit, int64_t index);
  absl::Status ParseFloatText(double* out, bool* is_nan_payload, uint64_t* payload);

  // parser_attributes.cc helpers
  absl::Status ParseIntList(std::vector<int64_t>* out);
  absl::Status ParseBool(bool* out);
  absl::Status ParseNameList(std::vector<NameRef>* out);
  absl::Status ParseWindow(Window* out);
  absl::Status ParseConvDims(ConvDimensionNumbers* out);
  absl::Status ParsePadding(std::vector<PaddingDim>* out);
  absl::Status ParseSlices(std::vector<SliceDim>* out);
  absl::Status ParseReplicaGroups(Attributes* a);
  absl::Status ParseFloat(float* out);
  absl::Status ParseWord(std::string* out, std::string_view what);

  Lexer lex_;
  std::unordered_set<std::string> computation_names_;
  // Instructions whose computation references await resolution.
  std::vector<std::pair<Instruction*, std::vector<std::pair<std::string, std::vector<NameRef>>>>>
      pending_calls_;
};

}  // namespace hlox::parser_internal
