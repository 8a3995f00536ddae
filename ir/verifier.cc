// Module verifier: structure (entry, roots, parameters, operand ownership, acyclicity),
// operand counts from the opcode table, called computations' signatures, and every
// instruction's declared shape against the shape inferred from its operands.
#include "ir/verifier.h"

#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ir/shape_inference.h"

namespace hlox {
namespace {

absl::Status Err(const Computation& c, const Instruction* i, const std::string& msg) {
  if (!i) return absl::InvalidArgumentError(absl::StrCat("computation ", c.name(), ": ", msg));
  return absl::InvalidArgumentError(absl::StrCat("computation ", c.name(), ", instruction ", i->name(), " (",
                                                 std::string(OpcodeName(i->opcode())), "): ", msg));
}

bool IsScalar(const Shape& s) { return s.IsArray() && s.rank() == 0; }

// A reducer-style computation: `n_params` scalar parameters and a result of `n_results` scalars.
absl::Status CheckScalarComputation(const Computation* c, int64_t n_params, int64_t n_results,
                                    bool pred_result, const std::string& role) {
  if (c->parameter_count() != n_params) {
    return absl::InvalidArgumentError(absl::StrCat(role, " ", c->name(), " takes ", c->parameter_count(),
                                                   " parameters, expected ", n_params));
  }
  for (Instruction* p : c->parameters()) {
    if (!p || !IsScalar(p->shape())) {
      return absl::InvalidArgumentError(absl::StrCat(role, " ", c->name(), " parameters must be scalars"));
    }
  }
  const Shape& r = c->ResultShape();
  bool ok = n_results == 1 ? IsScalar(r) : (r.IsTuple() && r.tuple_size() == n_results);
  if (ok && pred_result) ok = r.element_type() == PrimitiveType::kPred;
  if (!ok) return absl::InvalidArgumentError(absl::StrCat(role, " ", c->name(), " returns ", r.ToString(false)));
  return absl::OkStatus();
}

absl::Status CheckCalledSignatures(const Instruction& i) {
  const auto& called = i.called_computations();
  int64_t n = i.operand_count();
  auto need = [&](size_t count) -> absl::Status {
    if (called.size() != count) {
      return absl::InvalidArgumentError(absl::StrCat("expects ", count, " called computations, has ", called.size()));
    }
    return absl::OkStatus();
  };
  switch (i.opcode()) {
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      HLOX_RETURN_IF_ERROR(need(1));
      return CheckScalarComputation(called[0], n, n / 2, false, "reducer");
    case Opcode::kScatter:
      HLOX_RETURN_IF_ERROR(need(1));
      return CheckScalarComputation(called[0], n - 1, (n - 1) / 2, false, "scatter combiner");
    case Opcode::kSort:
      HLOX_RETURN_IF_ERROR(need(1));
      return CheckScalarComputation(called[0], 2 * n, 1, true, "comparator");
    case Opcode::kMap:
      HLOX_RETURN_IF_ERROR(need(1));
      return CheckScalarComputation(called[0], n, 1, false, "map computation");
    case Opcode::kScan:  // its signature is checked against the operands by shape inference
      return need(1);
    case Opcode::kSelectAndScatter:
      HLOX_RETURN_IF_ERROR(need(2));
      HLOX_RETURN_IF_ERROR(CheckScalarComputation(called[0], 2, 1, true, "select"));
      return CheckScalarComputation(called[1], 2, 1, false, "scatter");
    case Opcode::kAllReduce:
    case Opcode::kReduceScatter:
    case Opcode::kAllReduceStart:
    case Opcode::kCollectiveReduce:
      HLOX_RETURN_IF_ERROR(need(1));
      return CheckScalarComputation(called[0], 2, 1, false, "reducer");
    default:
      return absl::OkStatus();
  }
}

absl::Status CheckAcyclic(const Computation& c) {
  enum { kNew, kOpen, kDone };
  std::unordered_map<const Instruction*, int> state;
  for (const auto& start : c.instructions()) {
    if (state[start.get()] == kDone) continue;
    std::vector<std::pair<const Instruction*, size_t>> stack{{start.get(), 0}};
    state[start.get()] = kOpen;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      size_t n_ops = node->operands().size();
      if (next < n_ops + node->control_predecessors().size()) {
        const Instruction* dep = next < n_ops ? node->operand(next) : node->control_predecessors()[next - n_ops];
        ++next;
        int& s = state[dep];
        if (s == kOpen) return Err(c, dep, "is part of a cycle");
        if (s == kNew) {
          s = kOpen;
          stack.push_back({dep, 0});
        }
      } else {
        state[node] = kDone;
        stack.pop_back();
      }
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyComputation(const Module& m, const Computation& c,
                               const std::unordered_set<const Computation*>& comps) {
  if (c.instruction_count() == 0) return Err(c, nullptr, "has no instructions");
  if (!c.root() || c.root()->parent() != &c) return Err(c, nullptr, "has no root in the computation");
  std::vector<bool> seen(c.parameter_count(), false);
  for (const auto& ip : c.instructions()) {
    if (ip->opcode() != Opcode::kParameter) continue;
    int64_t num = ip->parameter_number();
    if (num < 0 || num >= c.parameter_count() || seen[num]) {
      return Err(c, ip.get(), absl::StrCat("duplicate or invalid parameter number ", num));
    }
    seen[num] = true;
  }
  for (int64_t p = 0; p < c.parameter_count(); ++p) {
    if (!seen[p]) return Err(c, nullptr, absl::StrCat("parameter ", p, " is missing"));
  }
  if (!c.header_params().empty()) {
    if (static_cast<int64_t>(c.header_params().size()) != c.parameter_count()) {
      return Err(c, nullptr, "signature parameter count differs from its parameters");
    }
    for (int64_t p = 0; p < c.parameter_count(); ++p) {
      if (!c.header_params()[p].second.Compatible(c.parameter(p)->shape())) {
        return Err(c, c.parameter(p), "shape differs from the computation signature");
      }
    }
  }
  if (c.header_result() && !c.header_result()->Compatible(c.ResultShape())) {
    return Err(c, c.root(), "root shape differs from the computation signature");
  }
  for (const auto& ip : c.instructions()) {
    const Instruction& i = *ip;
    for (Instruction* op : i.operands()) {
      if (op->parent() != &c) return Err(c, &i, absl::StrCat("operand ", op->name(), " is not in this computation"));
    }
    int arity = OpcodeArity(i.opcode());
    if (arity != kVariadic && i.operand_count() != arity) {
      return Err(c, &i, absl::StrCat("expects ", arity, " operands, has ", i.operand_count()));
    }
    for (const Computation* callee : i.called_computations()) {
      if (!comps.count(callee)) return Err(c, &i, "calls a computation outside the module");
      if (callee == &c) return Err(c, &i, "calls its own computation");
    }
    absl::Status sig = CheckCalledSignatures(i);
    if (!sig.ok()) return Err(c, &i, std::string(sig.message()));
    absl::StatusOr<Shape> inferred = InferInstructionShape(i);
    if (inferred.ok()) {
      if (!inferred->Compatible(i.shape())) {
        return Err(c, &i, absl::StrCat("declared shape ", i.shape().ToString(false), " but operands give ",
                                       inferred->ToString(false)));
      }
    } else if (inferred.status().code() != absl::StatusCode::kUnimplemented) {
      return Err(c, &i, std::string(inferred.status().message()));
    }
  }
  (void)m;
  return CheckAcyclic(c);
}

}  // namespace

absl::Status VerifyModule(const Module& module) {
  if (!module.entry()) return absl::InvalidArgumentError("module has no ENTRY computation");
  std::unordered_set<const Computation*> comps;
  for (const auto& c : module.computations()) comps.insert(c.get());
  if (!comps.count(module.entry())) return absl::InvalidArgumentError("entry computation is not in the module");
  for (const auto& c : module.computations()) HLOX_RETURN_IF_ERROR(VerifyComputation(module, *c, comps));
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferShape(const Instruction& instr) { return InferInstructionShape(instr); }

}  // namespace hlox
