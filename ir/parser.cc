// HLO text parser: module header, computations (signatures, ENTRY, `} // name` trailers,
// execution_thread), the trailing FileNames/StackFrames tables, and once everything is read,
// name resolution (operands used before their definition, computations defined later) and the
// module-wide checks. One instruction line is parser_instruction.cc.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ir/parser.h"
#include "ir/parser_internal.h"

namespace hlox {
namespace parser_internal {
namespace {

bool IsTrailerTable(std::string_view w) {
  return w == "FileNames" || w == "FunctionNames" || w == "FileLocations" || w == "StackFrames";
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> Parser::ParseModule() {
  if (!lex_.TryConsumeWord("HloModule")) return lex_.Error("expected 'HloModule'");
  std::string_view name = lex_.ConsumeName();
  if (name.empty()) return lex_.Error("expected the module name after 'HloModule'");
  // Old dumps write `HloModule name:`; XLA's lexer reads a name with a ':' right after it.
  if (lex_.pos() < lex_.text().size() && lex_.text()[lex_.pos()] == ':') lex_.set_pos(lex_.pos() + 1);
  auto module = std::make_unique<Module>(std::string(name));
  while (lex_.TryConsume(',')) HLOX_RETURN_IF_ERROR(ParseModuleAttribute(module.get()));
  bool saw_entry = false;
  while (!lex_.AtEnd()) {
    if (lex_.text()[lex_.pos()] != '%' && IsTrailerTable(lex_.PeekName())) {
      // The tables close older dumps; newer ones put them before the computations.
      HLOX_RETURN_IF_ERROR(ParseStackFrameTables(module.get()));
      continue;
    }
    HLOX_RETURN_IF_ERROR(ParseComputation(module.get(), &saw_entry));
  }
  if (module->computations().empty()) return lex_.Error("module has no computations");
  if (!saw_entry) module->set_entry(module->computations().back().get());
  AddAsyncWrappedComputations(module.get());
  HLOX_RETURN_IF_ERROR(ResolveCalls(module.get()));
  HLOX_RETURN_IF_ERROR(InferMissingShapes(*module));
  HLOX_RETURN_IF_ERROR(CheckWrittenShapes());
  HLOX_RETURN_IF_ERROR(CheckAsyncChains());
  HLOX_RETURN_IF_ERROR(CheckAliasing(*module));
  return module;
}

// FileNames / FunctionNames / FileLocations / StackFrames: each a title and entries `id "text"` or
// `id {fields}`. Their text is kept verbatim (Module::trailer) and printed after the computations.
absl::Status Parser::ParseStackFrameTables(Module* module) {
  const size_t start = lex_.SkipSpace();
  while (!lex_.AtEnd() && lex_.text()[lex_.pos()] != '%' && IsTrailerTable(lex_.PeekName())) {
    lex_.ConsumeName();
    while (!lex_.AtEnd() && std::isdigit(static_cast<unsigned char>(lex_.text()[lex_.pos()]))) {
      int64_t id;
      HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&id, "table entry id"));
      lex_.SkipSpace();
      if (lex_.Peek() == '"') {
        std::string text;
        HLOX_RETURN_IF_ERROR(lex_.ConsumeString(&text));
      } else if (lex_.Peek() == '{') {
        std::string_view raw;
        HLOX_RETURN_IF_ERROR(lex_.ConsumeRawValue(&raw));
      } else {
        return lex_.Error("expected a quoted name or {fields} after a table entry id");
      }
      lex_.SkipSpace();
    }
  }
  std::string_view tables = lex_.text().substr(start, lex_.pos() - start);
  while (!tables.empty() && std::isspace(static_cast<unsigned char>(tables.back()))) tables.remove_suffix(1);
  std::string& trailer = module->trailer();
  if (!trailer.empty() && !tables.empty()) trailer += "\n\n";
  trailer += std::string(tables);
  return absl::OkStatus();
}

absl::Status Parser::ParseSignature(Computation* comp) {
  HLOX_RETURN_IF_ERROR(lex_.Expect('(', "to start the computation signature"));
  if (!lex_.TryConsume(')')) {
    while (true) {
      std::string_view pname = lex_.ConsumeName();
      if (pname.empty()) return lex_.Error("expected a parameter name in the signature");
      HLOX_RETURN_IF_ERROR(lex_.Expect(':', "after a parameter name in the signature"));
      Shape s;
      HLOX_RETURN_IF_ERROR(ParseShape(&s));
      comp->header_params().emplace_back(std::string(pname), std::move(s));
      if (lex_.TryConsume(')')) break;
      HLOX_RETURN_IF_ERROR(lex_.Expect(',', "or ')' in the computation signature"));
    }
  }
  if (!lex_.TryConsume("->")) return lex_.Error("expected '->' and the result shape");
  Shape result;
  HLOX_RETURN_IF_ERROR(ParseShape(&result));
  comp->header_result() = std::move(result);
  return absl::OkStatus();
}

absl::Status Parser::ParseComputation(Module* module, bool* saw_entry) {
  size_t start = lex_.SkipSpace();
  bool is_entry = lex_.TryConsumeWord("ENTRY");
  size_t name_pos = lex_.SkipSpace();
  std::string_view name = lex_.ConsumeName();
  if (name.empty()) return lex_.Error("expected a computation name");
  if (!computation_names_.insert(std::string(name)).second) {
    return lex_.ErrorAt(name_pos, absl::StrCat("duplicate computation name '", std::string(name), "'"));
  }
  // Module::AddComputation looks names up linearly; bound the quadratic cost on hostile input.
  if (static_cast<int64_t>(module->computations().size()) >= kMaxComputations) {
    return lex_.ErrorAt(name_pos, absl::StrCat("module has more than ", kMaxComputations, " computations"));
  }
  if (is_entry && *saw_entry) return lex_.ErrorAt(start, "more than one ENTRY computation");
  auto owned = std::make_unique<Computation>(std::string(name));
  if (lex_.Peek() == '(') HLOX_RETURN_IF_ERROR(ParseSignature(owned.get()));
  HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open the computation body"));
  Computation* comp = module->AddComputation(std::move(owned));
  if (is_entry) {
    module->set_entry(comp);
    *saw_entry = true;
  }
  std::vector<PendingInstr> instrs;
  while (!lex_.TryConsume('}')) {
    if (lex_.AtEnd()) return lex_.ErrorAt(start, "computation is not closed with '}'");
    HLOX_RETURN_IF_ERROR(ParseInstruction(&instrs));
  }
  // The one computation attribute XLA has: `}, execution_thread="name"`.
  while (lex_.TryConsume(',')) {
    size_t key_pos = lex_.SkipSpace();
    if (!lex_.TryConsumeWord("execution_thread")) {
      return lex_.ErrorAt(key_pos, "expected execution_thread, the only computation attribute");
    }
    HLOX_RETURN_IF_ERROR(lex_.Expect('=', "after execution_thread"));
    if (!comp->execution_thread().empty()) return lex_.ErrorAt(key_pos, "execution_thread given twice");
    std::string thread;
    if (lex_.Peek() != '"') return lex_.Error("expected a quoted thread name");
    HLOX_RETURN_IF_ERROR(lex_.ConsumeString(&thread));
    if (thread.empty()) return lex_.ErrorAt(key_pos, "empty execution_thread");
    comp->set_execution_thread(std::move(thread));
  }
  return FinishComputation(comp, &instrs, name_pos);
}

absl::Status Parser::FinishComputation(Computation* comp, std::vector<PendingInstr>* instrs,
                                       size_t comp_pos) {
  if (instrs->empty()) return lex_.ErrorAt(comp_pos, "computation has no instructions");
  std::unordered_map<std::string_view, PendingInstr*> by_name;
  std::vector<PendingInstr*> params;
  PendingInstr* root = nullptr;
  for (PendingInstr& p : *instrs) {
    const std::string& n = p.instr->name();
    if (!by_name.emplace(n, &p).second) {
      return lex_.ErrorAt(p.pos, absl::StrCat("duplicate instruction name '", n, "'"));
    }
    if (p.is_root) {
      if (root) return lex_.ErrorAt(p.pos, "more than one ROOT instruction");
      root = &p;
    }
    if (p.instr->opcode() == Opcode::kParameter) params.push_back(&p);
  }
  // A sanity bound; parameter numbers are checked against the count below before indexing.
  if (static_cast<int64_t>(params.size()) > kMaxParameters) {
    return lex_.ErrorAt(params[kMaxParameters]->pos,
                        absl::StrCat("computation has more than ", kMaxParameters, " parameters"));
  }
  // Parameter numbers must be exactly 0..N-1 (checked before the computation indexes them).
  std::vector<bool> seen(params.size(), false);
  for (PendingInstr* p : params) {
    int64_t n = p->instr->parameter_number();
    if (n >= static_cast<int64_t>(params.size())) {
      return lex_.ErrorAt(p->pos, absl::StrCat("parameter number ", n, " out of range: the computation has ",
                                               params.size(), " parameters"));
    }
    if (seen[n]) return lex_.ErrorAt(p->pos, absl::StrCat("duplicate parameter number ", n));
    seen[n] = true;
  }
  for (PendingInstr& p : *instrs) {
    if (p.instr->opcode() == Opcode::kParameter && !p.operands.empty()) {
      return lex_.ErrorAt(p.pos, "parameter takes no operands");
    }
  }
  for (PendingInstr& p : *instrs) p.raw = comp->AddInstruction(std::move(p.instr));
  for (PendingInstr& p : *instrs) {
    for (const NameRef& r : p.operands) {
      auto it = by_name.find(r.name);
      if (it == by_name.end()) {
        return lex_.ErrorAt(r.pos, absl::StrCat("unknown operand '", r.name, "'"));
      }
      // Checked once every shape is known (some are inferred after the whole text is read).
      if (r.written_shape) HLOX_RETURN_IF_ERROR(CheckWrittenShape(it->second, std::move(*r.written_shape), r.pos));
      p.raw->AppendOperand(it->second->raw);
    }
    if (p.layout_constraints) layout_checks_.push_back({p.raw, std::move(*p.layout_constraints), p.layout_constraints_pos});
    if (p.infer_shape) shapes_to_infer_.push_back({p.raw, p.pos});
    if (!p.operand_aliases.empty()) operand_alias_checks_.push_back({p.raw, std::move(p.operand_aliases)});
    if (IsAsyncOpcode(p.raw->opcode())) async_ops_.push_back({p.raw, p.pos, p.async_wrapped});
    for (const NameRef& r : p.control_preds) {
      auto it = by_name.find(r.name);
      if (it == by_name.end()) {
        return lex_.ErrorAt(r.pos, absl::StrCat("unknown control predecessor '", r.name, "'"));
      }
      p.raw->mutable_control_predecessors().push_back(it->second->raw);
    }
    if (!p.calls.empty()) pending_calls_.emplace_back(p.raw, std::move(p.calls));
  }
  NameGeneratedInstructions(instrs);
  comp->set_root(root ? root->raw : instrs->back().raw);
  comp->RebuildParameterList();
  // Reject cycles (possible because operands may be used before they are defined).
  std::unordered_map<Instruction*, int> pending;
  std::vector<Instruction*> ready;
  for (const auto& i : comp->instructions()) {
    std::unordered_set<Instruction*> deps(i->operands().begin(), i->operands().end());
    deps.insert(i->control_predecessors().begin(), i->control_predecessors().end());
    pending[i.get()] = static_cast<int>(deps.size());
    if (deps.empty()) ready.push_back(i.get());
  }
  std::unordered_map<Instruction*, std::vector<Instruction*>> succ;
  for (const auto& i : comp->instructions()) {
    std::unordered_set<Instruction*> deps(i->operands().begin(), i->operands().end());
    deps.insert(i->control_predecessors().begin(), i->control_predecessors().end());
    for (Instruction* d : deps) succ[d].push_back(i.get());
  }
  size_t done = 0;
  while (!ready.empty()) {
    Instruction* i = ready.back();
    ready.pop_back();
    ++done;
    for (Instruction* s : succ[i]) {
      if (--pending[s] == 0) ready.push_back(s);
    }
  }
  if (done != comp->instructions().size()) {
    for (PendingInstr& p : *instrs) {
      if (pending[p.raw] > 0) {
        return lex_.ErrorAt(p.pos, absl::StrCat("instruction '", p.raw->name(), "' is part of a cycle"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::ResolveCalls(Module* module) {
  std::unordered_map<std::string_view, Computation*> comps;
  for (const auto& c : module->computations()) comps.emplace(c->name(), c.get());
  for (auto& entry : pending_calls_) {
    Instruction* instr = entry.first;
    const auto& calls = entry.second;
    auto find = [&](std::string_view key) -> const std::vector<NameRef>* {
      for (const auto& [k, names] : calls) {
        if (k == key) return &names;
      }
      return nullptr;
    };
    // Role order fixed by opcode; everything else in text order.
    std::vector<const NameRef*> order;
    auto add_key = [&](std::string_view key) {
      if (const auto* names = find(key)) {
        for (const NameRef& r : *names) order.push_back(&r);
      }
    };
    std::vector<std::string_view> roles;
    switch (instr->opcode()) {
      case Opcode::kWhile: roles = {"condition", "body"}; break;
      case Opcode::kConditional: roles = {"true_computation", "false_computation", "branch_computations"}; break;
      case Opcode::kSelectAndScatter: roles = {"select", "scatter"}; break;
      default: break;
    }
    for (std::string_view role : roles) add_key(role);
    for (const auto& [k, names] : calls) {
      if (std::find(roles.begin(), roles.end(), k) != roles.end()) continue;
      for (const NameRef& r : names) order.push_back(&r);
    }
    for (const NameRef* r : order) {
      auto it = comps.find(r->name);
      if (it == comps.end()) {
        return lex_.ErrorAt(r->pos, absl::StrCat("unknown computation '", r->name, "'"));
      }
      if (it->second == instr->parent()) {
        return lex_.ErrorAt(r->pos, absl::StrCat("computation '", r->name, "' calls itself"));
      }
      instr->mutable_called_computations().push_back(it->second);
      if (instr->opcode() == Opcode::kFusion) it->second->set_is_fusion_computation(true);
    }
  }
  // Reject recursion in the call graph and call chains deeper than kMaxCallDepth (iterative
  // three-colour DFS, so hostile nesting cannot overflow the stack here or later).
  std::unordered_map<Computation*, std::vector<Computation*>> callees;
  for (const auto& c : module->computations()) {
    auto& v = callees[c.get()];
    for (const auto& i : c->instructions()) {
      v.insert(v.end(), i->called_computations().begin(), i->called_computations().end());
    }
  }
  std::unordered_map<Computation*, int> color;
  std::unordered_map<Computation*, int64_t> depth;
  for (const auto& c : module->computations()) {
    if (color[c.get()] != 0) continue;
    std::vector<std::pair<Computation*, size_t>> stack{{c.get(), 0}};
    color[c.get()] = 1;
    while (!stack.empty()) {
      auto& [comp, next] = stack.back();
      const std::vector<Computation*>& out = callees[comp];
      if (next == out.size()) {
        int64_t d = 0;
        for (Computation* callee : out) d = std::max(d, depth[callee] + 1);
        if (d > kMaxCallDepth) {
          return absl::InvalidArgumentError(absl::StrCat(lex_.filename(), ": error: computation '", comp->name(),
                                                         "' has calls nested more than ", kMaxCallDepth, " deep"));
        }
        depth[comp] = d;
        color[comp] = 2;
        stack.pop_back();
        continue;
      }
      Computation* callee = out[next++];
      if (color[callee] == 1) {
        return absl::InvalidArgumentError(absl::StrCat(lex_.filename(), ": error: computation '", callee->name(),
                                                       "' is called recursively"));
      }
      if (color[callee] == 0) {
        color[callee] = 1;
        stack.emplace_back(callee, 0);
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> Parser::ParseShapeOnly() {
  Shape s;
  HLOX_RETURN_IF_ERROR(ParseShape(&s));
  if (!lex_.AtEnd()) return lex_.Error("unexpected text after the shape");
  return s;
}

}  // namespace parser_internal

absl::StatusOr<std::unique_ptr<Module>> ParseModule(std::string_view text, std::string_view filename) {
  parser_internal::Parser parser(text, filename);
  return parser.ParseModule();
}

absl::StatusOr<std::unique_ptr<Module>> ParseModuleFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::InvalidArgumentError(absl::StrCat(path, ": read error"));
  std::string text = ss.str();
  return ParseModule(text, path);
}

absl::StatusOr<Shape> ParseShape(std::string_view text) {
  parser_internal::Parser parser(text, "<shape>");
  return parser.ParseShapeOnly();
}

}  // namespace hlox
