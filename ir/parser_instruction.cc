// One instruction line: `[ROOT] name = shape opcode(operands), attributes`, operands that are
// names (with an optional written shape) or instructions nested in place, and the names the
// nested ones get once their computation is read.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ir/parser_internal.h"

namespace hlox::parser_internal {

absl::Status Parser::ParseInstruction(std::vector<PendingInstr>* instrs) {
  PendingInstr p;
  p.is_root = lex_.TryConsumeWord("ROOT");
  p.pos = lex_.SkipSpace();
  std::string_view name = lex_.ConsumeName();
  if (name.empty()) return lex_.Error("expected an instruction name");
  HLOX_RETURN_IF_ERROR(lex_.Expect('=', "after the instruction name"));
  std::string owned_name(name);
  HLOX_RETURN_IF_ERROR(ParseInstructionRhs(&p, instrs, 0));
  p.instr->set_name(std::move(owned_name));
  instrs->push_back(std::move(p));
  return absl::OkStatus();
}

bool Parser::AtShape() {
  char c = lex_.Peek();
  if (c == '(') return true;
  std::string_view word = lex_.PeekName();
  if (c == '%' || !ParsePrimitiveType(word).has_value()) return false;
  size_t after = word.data() - lex_.text().data() + word.size();
  size_t save = lex_.pos();
  lex_.set_pos(after);
  char next = lex_.Peek();
  lex_.set_pos(save);
  // `f32[..]`, or `token %t` / `opaque x` for the non-array types written without brackets.
  return next == '[' || next == '%' || IsNameChar(next);
}

bool Parser::AtOpcodeCall() {
  char c = lex_.Peek();
  std::string_view word = lex_.PeekName();
  if (c == '(' || c == '%' || word.empty()) return false;
  size_t save = lex_.pos();
  lex_.set_pos(word.data() - lex_.text().data() + word.size());
  bool call = lex_.Peek() == '(';
  lex_.set_pos(save);
  return call;
}

absl::Status Parser::ParseInstructionRhs(PendingInstr* p, std::vector<PendingInstr>* instrs, int depth) {
  Shape shape;
  // `opcode(` right away: no shape written; it is inferred once the module is read.
  p->infer_shape = AtOpcodeCall();
  if (!p->infer_shape) HLOX_RETURN_IF_ERROR(ParseShape(&shape));
  size_t op_pos = lex_.SkipSpace();
  std::string_view opname = lex_.ConsumeName();
  if (opname.empty()) return lex_.Error("expected an opcode");
  std::optional<Opcode> opcode = ParseOpcode(opname);
  std::optional<Opcode> wrapped;  // `op-start` / `op-update` / `op-done` sugar for async ops
  if (!opcode) HLOX_RETURN_IF_ERROR(ParseAsyncSugar(opname, op_pos, &opcode, &wrapped));
  HLOX_RETURN_IF_ERROR(lex_.Expect('(', "after the opcode"));
  p->instr = Instruction::Create(*opcode, shape, {});
  p->async_wrapped = wrapped;
  if (*opcode == Opcode::kParameter) {
    int64_t number;
    HLOX_RETURN_IF_ERROR(ParseParameterNumber(&number));
    p->instr->attrs().parameter_number = number;
    HLOX_RETURN_IF_ERROR(lex_.Expect(')', "after the parameter number"));
  } else if (*opcode == Opcode::kConstant) {
    Literal lit;
    HLOX_RETURN_IF_ERROR(ParseLiteral(shape, &lit));
    p->instr->set_literal(std::move(lit));
    HLOX_RETURN_IF_ERROR(lex_.Expect(')', "after the constant's value"));
  } else {
    HLOX_RETURN_IF_ERROR(ParseOperands(p, instrs, depth));
  }
  // The wrapped op of `op-start` sugar takes the attributes, bar the async ones.
  PendingInstr wrapped_op;
  if (wrapped && *opcode == Opcode::kAsyncStart) {
    if (!shape.IsTuple() || shape.tuple_size() < 2) {
      return lex_.ErrorAt(op_pos, "an async-start's shape must be a tuple ((operand shapes), result, ...)");
    }
    wrapped_op.instr = Instruction::Create(*wrapped, shape.tuple_shape(1), {});
  }
  // A nested instruction's attributes would be ambiguous with the next operand (XLA agrees).
  std::vector<std::string_view> seen;
  while (depth == 0 && lex_.TryConsume(',')) {
    size_t key_pos = lex_.SkipSpace();
    std::string_view key = lex_.ConsumeName();
    if (key.empty()) return lex_.Error("expected an attribute name");
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      return lex_.ErrorAt(key_pos, absl::StrCat("attribute '", std::string(key), "' given twice"));
    }
    seen.push_back(key);
    if (!lex_.TryConsume('=')) return lex_.Error(absl::StrCat("expected '=' after attribute '", std::string(key), "'"));
    bool to_wrapped = wrapped_op.instr && key != "async_execution_thread" && key != "control-predecessors";
    HLOX_RETURN_IF_ERROR(ParseAttribute(key, key_pos, to_wrapped ? &wrapped_op : p));
  }
  if (wrapped_op.instr) HLOX_RETURN_IF_ERROR(WrapAsyncStart(p, &wrapped_op, op_pos));
  return absl::OkStatus();
}

// operand ::= [shape] name | [shape] opcode '(' operands ')'   (the second is a nested
// instruction; without a shape, its shape is inferred as for any instruction).
absl::Status Parser::ParseOperands(PendingInstr* p, std::vector<PendingInstr>* instrs, int depth) {
  if (lex_.TryConsume(')')) return absl::OkStatus();
  while (true) {
    size_t start = lex_.SkipSpace();
    std::optional<Shape> written;
    if (AtShape()) {
      written.emplace();
      HLOX_RETURN_IF_ERROR(ParseShape(&*written));
    }
    size_t name_pos = lex_.SkipSpace();
    std::string_view name = lex_.ConsumeName();
    if (name.empty()) return lex_.Error("expected an operand name");
    if (lex_.Peek() == '(') {
      if (depth + 1 > kMaxNestedInstructionDepth) {
        return lex_.ErrorAt(start, absl::StrCat("instructions nested more than ", kMaxNestedInstructionDepth,
                                                " deep in operand lists"));
      }
      lex_.set_pos(start);
      PendingInstr nested;
      nested.pos = start;
      nested.generated_name = true;
      HLOX_RETURN_IF_ERROR(ParseInstructionRhs(&nested, instrs, depth + 1));
      // '#' cannot appear in a written name, so the placeholder never collides.
      std::string placeholder = absl::StrCat("#", nested_count_++);
      nested.instr->set_name(placeholder);
      p->operands.push_back({std::move(placeholder), start, std::nullopt});
      instrs->push_back(std::move(nested));
    } else {
      p->operands.push_back({std::string(name), name_pos, std::move(written)});
    }
    if (lex_.TryConsume(')')) return absl::OkStatus();
    HLOX_RETURN_IF_ERROR(lex_.Expect(',', "or ')' in the operand list"));
  }
}

void Parser::NameGeneratedInstructions(std::vector<PendingInstr>* instrs) {
  std::unordered_set<std::string> taken;
  for (const PendingInstr& p : *instrs) {
    if (!p.generated_name) taken.insert(p.raw->name());
  }
  std::unordered_map<std::string, int64_t> next;
  for (PendingInstr& p : *instrs) {
    if (!p.generated_name) continue;
    std::string base(OpcodeName(p.raw->opcode()));
    std::string candidate;
    do {
      candidate = absl::StrCat(base, ".", ++next[base]);
    } while (taken.count(candidate));
    taken.insert(candidate);
    // Register the final name so names the module hands out later never collide with it.
    if (Module* m = p.raw->parent() ? p.raw->parent()->parent() : nullptr) m->ReserveName(candidate);
    p.raw->set_name(std::move(candidate));
  }
}

}  // namespace hlox::parser_internal
