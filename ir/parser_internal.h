// Internal interface of the HLO text parser, shared by parser.cc (module, computations,
// instructions), parser_shape.cc (shapes, layouts), parser_literal.cc (constants) and
// parser_attributes.cc (typed attributes). Not part of the public IR API; use ir/parser.h.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
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
// Saturation bound when comparing a constant's element count with the text that holds it.
inline constexpr int64_t kMaxElements = int64_t{1} << 40;
// A shape's byte size must fit int64 (XLA's rule); larger element counts are only declared,
// never allocated by the parser, so they parse.
inline constexpr int64_t kMaxShapeBytes = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMaxCallDepth = 1000;
inline constexpr int64_t kMaxComputations = 20000;
inline constexpr int64_t kMaxParameters = int64_t{1} << 20;
// Instructions written inline as operands (`add(f32[] parameter(0), ...)`) may nest; deeper
// nesting is an error rather than unbounded recursion.
inline constexpr int kMaxNestedInstructionDepth = 256;

// The subshape of `s` at the tuple path `index`, or nullptr when the index does not exist.
inline const Shape* SubshapeAt(const Shape& s, const std::vector<int64_t>& index) {
  const Shape* cur = &s;
  for (int64_t i : index) {
    if (!cur->IsTuple() || i < 0 || i >= cur->tuple_size()) return nullptr;
    cur = &cur->tuple_shape(i);
  }
  return cur;
}

inline bool IsAsyncOpcode(Opcode op) {
  return op == Opcode::kAsyncStart || op == Opcode::kAsyncUpdate || op == Opcode::kAsyncDone;
}

// A name written in the text, with where it was written (for error messages).
struct NameRef {
  std::string name;
  size_t pos = 0;
  // The shape written before an operand name (`f32[10] %x`), checked against x's shape.
  std::optional<Shape> written_shape;
};

// One entry of output_to_operand_aliasing={ {out}: (operand, {index}) }, where it was written.
struct OperandAlias {
  std::vector<int64_t> output_index;
  int64_t operand = 0;
  std::vector<int64_t> operand_index;
  size_t pos = 0;
};

// An instruction parsed but not yet wired: operand, control-predecessor and computation names
// are resolved once the whole computation (operands) or file (computations) is read.
struct PendingInstr {
  std::unique_ptr<Instruction> instr;
  Instruction* raw = nullptr;
  size_t pos = 0;
  bool is_root = false;
  // Written inline as an operand: the name is a placeholder until FinishComputation.
  bool generated_name = false;
  std::vector<NameRef> operands;
  std::vector<NameRef> control_preds;
  // custom-call operand_layout_constraints, checked against the operands once they resolve.
  std::optional<std::vector<Shape>> layout_constraints;
  size_t layout_constraints_pos = 0;
  // The op named by `op-start` / `op-update` / `op-done` sugar.
  std::optional<Opcode> async_wrapped;
  // No shape was written: it is inferred from the operands (InferMissingShapes).
  bool infer_shape = false;
  std::vector<OperandAlias> operand_aliases;
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
  absl::Status ParseLayout(Shape* shape, int depth = 0);
  // parser_layout.cc: the layout items after ':' up to (not including) the closing '}'.
  absl::Status ParseLayoutItems(Layout* layout, int depth);
  absl::Status ParseDimLevels(Layout* layout);
  absl::Status ParseTiles(Layout* layout);
  absl::Status ParseLayoutInt(int64_t* out, std::string_view what);
  absl::Status ParseUnsignedType(std::optional<PrimitiveType>* out);
  absl::Status ParseSplitConfigs(Layout* layout);

  // parser_literal.cc: the literal inside constant(...), for the instruction's shape.
  absl::Status ParseLiteral(const Shape& shape, Literal* out);

  // parser_attributes.cc: one `key=value` after an instruction's operand list (the lexer is
  // just after '='). Typed keys fill instr attrs; the rest are kept raw.
  absl::Status ParseAttribute(std::string_view key, size_t key_pos, PendingInstr* p);
  // The value of `key` into p's typed attributes (or kept as text), whatever the opcode.
  absl::Status ParseAttributeValue(std::string_view key, size_t key_pos, PendingInstr* p);

  // parser_infer.cc: shapes the text leaves out (`r = add(a, b)`, nested `sqrt(parameter...)`
  // is not one: parameters need a shape), inferred once calls resolve; then the checks that
  // need every shape: written operand shapes and custom-call operand_layout_constraints.
  absl::Status InferMissingShapes(const Module& module);
  absl::Status CheckWrittenShapes();
  // Checks `written` against the operand's shape now, or once it is inferred.
  absl::Status CheckWrittenShape(const PendingInstr* operand, Shape written, size_t pos);
  absl::Status CheckOperandAliases(const Instruction& instr, const std::vector<OperandAlias>& aliases);

  Lexer& lex() { return lex_; }

 private:
  absl::Status ParseComputation(Module* module, bool* saw_entry);
  // One `[ROOT] name = shape opcode(operands), attributes` line; instructions nested in its
  // operand list are appended to `instrs` before it.
  absl::Status ParseInstruction(std::vector<PendingInstr>* instrs);
  // Everything after `name =`. Nested instructions (depth > 0) take no attributes, as in XLA.
  absl::Status ParseInstructionRhs(PendingInstr* p, std::vector<PendingInstr>* instrs, int depth);
  absl::Status ParseOperands(PendingInstr* p, std::vector<PendingInstr>* instrs, int depth);
  // True when the text at the current position starts a shape rather than a name.
  bool AtShape();
  // True when the text at the current position is `word(`: an opcode with no shape before it.
  bool AtOpcodeCall();
  // Renames instructions written inline to `opcode.N`, unique in the computation.
  void NameGeneratedInstructions(std::vector<PendingInstr>* instrs);
  absl::Status ParseSignature(Computation* comp);
  absl::Status ParseStackFrameTables(Module* module);
  absl::Status FinishComputation(Computation* comp, std::vector<PendingInstr>* instrs,
                                 size_t comp_pos);
  absl::Status ResolveCalls(Module* module);

  // parser_async.cc: `op-start`/`op-update`/`op-done` sugar, the computation an `op-start`
  // implies, and the checks on async-start -> async-update* -> async-done chains.
  absl::Status ParseAsyncSugar(std::string_view opname, size_t pos, std::optional<Opcode>* opcode,
                               std::optional<Opcode>* wrapped);
  absl::Status WrapAsyncStart(PendingInstr* start, PendingInstr* wrapped, size_t pos);
  void AddAsyncWrappedComputations(Module* module);
  absl::Status CheckAsyncChains();

  // parser_module_attributes.cc: one `key=value` of the module header (after the ','), with
  // input_output_alias and buffer_donor typed; CheckAliasing checks them against the entry.
  absl::Status ParseModuleAttribute(Module* module);
  absl::Status ParseShapeIndex(std::vector<int64_t>* out);
  // A parameter number (parameter(N), aliases, donors): a non-negative integer.
  absl::Status ParseParameterNumber(int64_t* out);
  absl::Status ParseAliases(Module* module);
  absl::Status ParseDonors(Module* module);
  absl::Status CheckAliasing(const Module& module);

  // parser_literal.cc helpers
  absl::Status ParseArrayLevel(Literal* lit, int64_t dim, int64_t* index);
  absl::Status ParseScalar(Literal* lit, int64_t index);
  // A real floating-point element: range-checked against its type, NaN payloads checked.
  absl::Status ParseRealScalar(Literal* lit, int64_t index);
  absl::Status ParseFloatText(double* out, bool* is_nan_payload, uint64_t* payload);

  // parser_attributes.cc helpers
  absl::Status ParseIntList(std::vector<int64_t>* out);
  absl::Status ParseBool(bool* out);
  absl::Status ParseNameList(std::vector<NameRef>* out);
  absl::Status ParseWindow(Window* out);
  absl::Status ParseConvDims(ConvDimensionNumbers* out, bool allow_unknown);
  absl::Status ParsePadding(std::vector<PaddingDim>* out);
  absl::Status ParseSlices(std::vector<SliceDim>* out);
  absl::Status ParseReplicaGroups(Attributes* a);
  absl::Status ParseMeshReplicaGroups(Attributes* a);
  absl::Status ParseFloat(float* out);

  // parser_checked_attributes.cc: attributes checked but kept as text. Sets *handled when
  // `key` is one of them for this opcode.
  absl::Status ParseCheckedAttribute(std::string_view key, size_t key_pos, PendingInstr* p, bool* handled);
  absl::Status ParseResultAccuracy();
  absl::Status ParseMetadataValue(bool allow_list = true);
  absl::Status ParsePrecisionList(Opcode op);
  absl::Status ParseOutputOperandAliasing(PendingInstr* p);
  absl::Status ParseBoolListOrBool();
  absl::Status ParseWordFrom(std::string_view what, size_t* pos, std::string_view* out);
  absl::Status ParseWord(std::string* out, std::string_view what);
  // parser_value_attributes.cc: statistics={...} and origin={...} into their typed forms;
  // CheckOriginalValue requires the tree to have the structure of `shape` (error at `pos`).
  absl::Status ParseStatistics(StatisticsViz* out);
  absl::Status ParseOriginalValue(OriginalValue* out);
  absl::Status ParseOriginalValueNode(OriginalValue* out, int depth);
  absl::Status CheckOriginalValue(const OriginalValue& v, const Shape& shape, size_t pos);
  // parser_sharding.cc: a `sharding` value, checked against `shape` (null: the shape is not
  // known yet, or this is an element of a tuple sharding).
  absl::Status ParseShardingValue(const Shape* shape, int depth = 0);
  // The tail of an iota device list, "[reshape] T(perm)" after "<=": `devices` of them (errors
  // about the count at `pos`, naming `what`), the transpose a permutation.
  absl::Status ParseIotaTail(int64_t devices, size_t pos, std::string_view what);
  // Integers between `open` and `close`, separated by commas.
  absl::Status ParseIntListIn(char open, char close, std::vector<int64_t>* out, std::string_view what);

  Lexer lex_;
  std::unordered_set<std::string> computation_names_;
  // An async-start/-update/-done as written: where, and the op its sugar named (if any).
  struct AsyncOp {
    Instruction* instr;
    size_t pos;
    std::optional<Opcode> sugar;
  };
  std::vector<AsyncOp> async_ops_;
  absl::Status CheckAsyncStart(const AsyncOp& a);
  // An async-update or async-done: its operand, its chain's start (memoized in start_of).
  absl::Status CheckAsyncFollower(const AsyncOp& a, std::unordered_map<const Instruction*, const Instruction*>* start_of);
  // Checks that wait until every shape is known (see parser_infer.cc).
  struct WrittenShape {
    const Instruction* operand;
    Shape shape;
    size_t pos;
  };
  std::vector<WrittenShape> written_shapes_;
  struct LayoutCheck {
    const Instruction* instr;
    std::vector<Shape> shapes;
    size_t pos;
  };
  std::vector<LayoutCheck> layout_checks_;
  std::vector<std::pair<const Instruction*, std::vector<OperandAlias>>> operand_alias_checks_;
  std::vector<std::pair<Instruction*, size_t>> shapes_to_infer_;
  // origin={...} on instructions whose shape is inferred: checked after inference, at pos.
  std::vector<std::pair<const Instruction*, size_t>> origin_checks_;
  // Computations implied by `op-start` sugar, with their starts, added once the text is read.
  std::vector<std::pair<std::unique_ptr<Computation>, Instruction*>> async_wrapped_;
  // Where each input_output_alias / buffer_donor entry was written, parallel to the module's.
  std::vector<size_t> alias_pos_, donor_pos_;
  // Counter for the placeholder names of instructions written inline as operands.
  int64_t nested_count_ = 0;
  // Instructions whose computation references await resolution.
  std::vector<std::pair<Instruction*, std::vector<std::pair<std::string, std::vector<NameRef>>>>>
      pending_calls_;
};

}  // namespace hlox::parser_internal
