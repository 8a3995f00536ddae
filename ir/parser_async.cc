// Async ops. `op-start(...)`, `op-update(...)` and `op-done(...)` for an opcode `op` that has
// no such spelling of its own are XLA's sugar for async-start/-update/-done wrapping `op`: the
// parser builds the computation an `op-start` implies (one parameter per operand, `op` as
// root, the attributes going to `op`) and prints the explicit form. Once every call is
// resolved, each async-start -> async-update* -> async-done chain is checked as XLA's
// verifier checks it: the shapes line up, the called computation fits, updates and dones
// follow a start of the same chain and name its computation (if they name one at all).
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ir/parser_internal.h"

namespace hlox::parser_internal {

absl::Status Parser::ParseAsyncSugar(std::string_view opname, size_t pos, std::optional<Opcode>* opcode,
                                     std::optional<Opcode>* wrapped) {
  const std::pair<std::string_view, Opcode> kSuffixes[] = {
      {"-start", Opcode::kAsyncStart}, {"-update", Opcode::kAsyncUpdate}, {"-done", Opcode::kAsyncDone}};
  for (const auto& [suffix, async_op] : kSuffixes) {
    if (opname.size() <= suffix.size() || opname.substr(opname.size() - suffix.size()) != suffix) continue;
    std::string_view inner = opname.substr(0, opname.size() - suffix.size());
    *wrapped = ParseOpcode(inner);
    if (!*wrapped || IsAsyncOpcode(**wrapped)) {
      return lex_.ErrorAt(pos, absl::StrCat("unknown opcode '", std::string(opname), "' ('", std::string(inner),
                                            "' is not an opcode an async op can wrap)"));
    }
    *opcode = async_op;
    return absl::OkStatus();
  }
  return lex_.ErrorAt(pos, absl::StrCat("unknown opcode '", std::string(opname), "'"));
}

absl::Status Parser::WrapAsyncStart(PendingInstr* start, PendingInstr* wrapped, size_t pos) {
  const Shape& operands = start->instr->shape().tuple_shape(0);
  if (!operands.IsTuple() || operands.tuple_size() != static_cast<int64_t>(start->operands.size())) {
    return lex_.ErrorAt(pos, absl::StrCat("an async-start's shape must begin with the tuple of its ",
                                          start->operands.size(), " operand shapes"));
  }
  Opcode op = wrapped->instr->opcode();
  auto comp = std::make_unique<Computation>(absl::StrCat("wrapped_", std::string(OpcodeName(op))));
  for (int64_t i = 0; i < operands.tuple_size(); ++i) {
    auto param = Instruction::CreateParameter(i, operands.tuple_shape(i));
    param->set_name(absl::StrCat("param_", i));
    wrapped->instr->AppendOperand(comp->AddInstruction(std::move(param)));
  }
  wrapped->instr->set_name(std::string(OpcodeName(op)));
  wrapped->raw = comp->AddInstruction(std::move(wrapped->instr));
  comp->set_root(wrapped->raw);
  comp->RebuildParameterList();
  if (!wrapped->operand_aliases.empty())
    operand_alias_checks_.push_back({wrapped->raw, std::move(wrapped->operand_aliases)});
  if (wrapped->layout_constraints) {
    layout_checks_.push_back({wrapped->raw, std::move(*wrapped->layout_constraints), wrapped->layout_constraints_pos});
  }
  if (!wrapped->calls.empty()) pending_calls_.emplace_back(wrapped->raw, std::move(wrapped->calls));
  async_wrapped_.emplace_back(std::move(comp), start->instr.get());
  return absl::OkStatus();
}

namespace {

// The thread an async-start names (async_execution_thread="x"), or "main".
std::string AsyncThread(const Instruction& start) {
  const std::string* t = start.FindRawAttribute("async_execution_thread");
  if (t == nullptr || t->size() < 2) return "main";
  return t->substr(1, t->size() - 2);
}

}  // namespace

void Parser::AddAsyncWrappedComputations(Module* module) {
  for (auto& [comp, start] : async_wrapped_) {
    // The implied computation runs on the thread the start names, as XLA creates it.
    if (std::string thread = AsyncThread(*start); thread != "main") comp->set_execution_thread(thread);
    // AddComputation renames it if a written computation already has the name.
    start->mutable_called_computations().push_back(module->AddComputation(std::move(comp)));
  }
  async_wrapped_.clear();
}

namespace {

std::string ThreadOf(const Computation& c) { return c.execution_thread().empty() ? "main" : c.execution_thread(); }

}  // namespace

absl::Status Parser::CheckAsyncStart(const AsyncOp& a) {
  const Instruction& i = *a.instr;
  if (i.called_computations().size() != 1) {
    return lex_.ErrorAt(a.pos, "an async-start calls exactly one computation (calls=...)");
  }
  const Computation& c = *i.called_computations()[0];
  const Shape& s = i.shape();
  if (!s.IsTuple() || s.tuple_size() < 2 || !s.tuple_shape(0).IsTuple() ||
      s.tuple_shape(0).tuple_size() != i.operand_count()) {
    return lex_.ErrorAt(a.pos, "an async-start's shape must be ((operand shapes), result, ...)");
  }
  if (c.parameter_count() != i.operand_count()) {
    return lex_.ErrorAt(a.pos, absl::StrCat("async-start has ", i.operand_count(), " operands but '", c.name(),
                                            "' takes ", c.parameter_count(), " parameters"));
  }
  for (int64_t k = 0; k < i.operand_count(); ++k) {
    const Shape& op = i.operand(k)->shape();
    if (!s.tuple_shape(0).tuple_shape(k).Compatible(op) || !c.parameter(k)->shape().Compatible(op)) {
      return lex_.ErrorAt(
          a.pos, absl::StrCat("async-start operand ", k, " (", op.ToString(), ") does not match its shape element {0,",
                              k, "} or parameter ", k, " of '", c.name(), "'"));
    }
  }
  if (!s.tuple_shape(1).Compatible(c.ResultShape())) {
    return lex_.ErrorAt(
        a.pos, absl::StrCat("async-start's result element ", s.tuple_shape(1).ToString(),
                            " differs from the result of '", c.name(), "' (", c.ResultShape().ToString(), ")"));
  }
  if (AsyncThread(i) != ThreadOf(c)) {
    return lex_.ErrorAt(a.pos, absl::StrCat("async_execution_thread \"", AsyncThread(i),
                                            "\" differs from the thread of '", c.name(), "' (\"", ThreadOf(c), "\")"));
  }
  return absl::OkStatus();
}

absl::Status Parser::CheckAsyncFollower(const AsyncOp& a,
                                        std::unordered_map<const Instruction*, const Instruction*>* start_of) {
  const Instruction& i = *a.instr;
  const std::string name(OpcodeName(i.opcode()));
  if (i.operand_count() != 1) return lex_.ErrorAt(a.pos, absl::StrCat(name, " takes one operand"));
  const Instruction* prev = i.operand(0);
  if (prev->opcode() != Opcode::kAsyncStart && prev->opcode() != Opcode::kAsyncUpdate) {
    return lex_.ErrorAt(a.pos, absl::StrCat("the operand of ", name, " must be an async-start or async-update, not ",
                                            std::string(OpcodeName(prev->opcode()))));
  }
  if (i.opcode() == Opcode::kAsyncUpdate && !i.shape().Compatible(prev->shape())) {
    return lex_.ErrorAt(a.pos, "an async-update's shape must equal its operand's");
  }
  // Walk up to the chain's start once per update (memoized, so long chains stay linear).
  std::vector<const Instruction*> path;
  const Instruction* start = prev;
  while (start->opcode() == Opcode::kAsyncUpdate && start->operand_count() == 1 && !start_of->count(start)) {
    path.push_back(start);
    start = start->operand(0);
  }
  if (auto it = start_of->find(start); it != start_of->end()) start = it->second;
  for (const Instruction* u : path) (*start_of)[u] = start;
  if (start->opcode() != Opcode::kAsyncStart || start->called_computations().size() != 1) {
    return absl::OkStatus();  // a malformed chain is reported at its own instructions
  }
  const Computation* c = start->called_computations()[0];
  if (!i.called_computations().empty() && i.called_computations() != start->called_computations()) {
    return lex_.ErrorAt(a.pos,
                        absl::StrCat(name, " calls a different computation than its async-start ('", c->name(), "')"));
  }
  const Shape& ss = start->shape();
  if (i.opcode() == Opcode::kAsyncDone && ss.IsTuple() && ss.tuple_size() >= 2 &&
      !i.shape().Compatible(ss.tuple_shape(1))) {
    return lex_.ErrorAt(a.pos, absl::StrCat("async-done's shape ", i.shape().ToString(),
                                            " differs from its async-start's result ", ss.tuple_shape(1).ToString()));
  }
  if (a.sugar && c->root() != nullptr && c->root()->opcode() != *a.sugar) {
    return lex_.ErrorAt(
        a.pos, absl::StrCat("this chain's async-start wraps ", std::string(OpcodeName(c->root()->opcode())), ", not ",
                            std::string(OpcodeName(*a.sugar))));
  }
  return absl::OkStatus();
}

absl::Status Parser::CheckAsyncChains() {
  std::unordered_map<const Instruction*, const Instruction*> start_of;
  for (const AsyncOp& a : async_ops_) {
    if (a.instr->opcode() == Opcode::kAsyncStart) {
      HLOX_RETURN_IF_ERROR(CheckAsyncStart(a));
    } else {
      HLOX_RETURN_IF_ERROR(CheckAsyncFollower(a, &start_of));
    }
  }
  return absl::OkStatus();
}

}  // namespace hlox::parser_internal
