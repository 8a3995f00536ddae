// Module comparison: walks both modules in text order and reports the first difference, with
// both sides printed so a failing round trip says exactly what changed.
#include "ir/module_compare.h"

#include <bit>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/printer.h"

namespace hlox {
namespace {

absl::Status Differ(const std::string& where, const std::string& what, const std::string& va,
                    const std::string& vb) {
  return absl::FailedPreconditionError(
      absl::StrCat(where, ": ", what, " differs:\n  a: ", va, "\n  b: ", vb));
}

std::string Names(const std::vector<Instruction*>& v) {
  std::vector<std::string> n;
  for (const Instruction* i : v) n.push_back(i->name());
  return absl::StrJoin(n, ",");
}

std::string CompNames(const std::vector<Computation*>& v) {
  std::vector<std::string> n;
  for (const Computation* c : v) n.push_back(c->name());
  return absl::StrJoin(n, ",");
}

absl::Status CompareInstructions(const Instruction& a, const Instruction& b, const std::string& where) {
  std::string w = absl::StrCat(where, " instruction '", a.name(), "'");
  auto text = [](const Instruction& i) { return PrintInstruction(i); };
  if (a.name() != b.name()) return Differ(where, "instruction name", a.name(), b.name());
  if (a.opcode() != b.opcode()) return Differ(w, "opcode", text(a), text(b));
  if (a.shape() != b.shape()) return Differ(w, "shape", a.shape().ToString(), b.shape().ToString());
  if (Names(a.operands()) != Names(b.operands())) return Differ(w, "operands", Names(a.operands()), Names(b.operands()));
  if (CompNames(a.called_computations()) != CompNames(b.called_computations())) {
    return Differ(w, "called computations", CompNames(a.called_computations()), CompNames(b.called_computations()));
  }
  if (Names(a.control_predecessors()) != Names(b.control_predecessors())) {
    return Differ(w, "control predecessors", Names(a.control_predecessors()), Names(b.control_predecessors()));
  }
  std::vector<std::string> diff = DiffAttributes(a.attrs(), b.attrs());
  if (!diff.empty()) return Differ(w, absl::StrCat("typed attributes (", absl::StrJoin(diff, ","), ")"), text(a), text(b));
  if (a.raw_attributes() != b.raw_attributes()) return Differ(w, "raw attributes", text(a), text(b));
  if (a.has_literal() != b.has_literal()) return Differ(w, "literal presence", text(a), text(b));
  if (a.has_literal()) {
    const Literal& la = a.literal();
    const Literal& lb = b.literal();
    if (!(la == lb) || la.shape() != lb.shape()) {
      return Differ(w, "literal", PrintLiteral(la).substr(0, 200), PrintLiteral(lb).substr(0, 200));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> DiffAttributes(const Attributes& a, const Attributes& b) {
  std::vector<std::string> d;
#define HLOX_CMP(field) \
  if (!(a.field == b.field)) d.push_back(#field)
  HLOX_CMP(dimensions); HLOX_CMP(slice); HLOX_CMP(dynamic_slice_sizes); HLOX_CMP(dot);
  HLOX_CMP(window); HLOX_CMP(conv); HLOX_CMP(feature_group_count); HLOX_CMP(batch_group_count);
  HLOX_CMP(padding); HLOX_CMP(gather); HLOX_CMP(gather_slice_sizes); HLOX_CMP(scatter);
  HLOX_CMP(indices_are_sorted); HLOX_CMP(unique_indices); HLOX_CMP(comparison);
  HLOX_CMP(comparison_type); HLOX_CMP(tuple_index); HLOX_CMP(iota_dimension);
  HLOX_CMP(parameter_number); HLOX_CMP(distribution); HLOX_CMP(rng_algorithm);
  HLOX_CMP(replica_groups); HLOX_CMP(replica_groups_text); HLOX_CMP(channel_id);
  HLOX_CMP(use_global_device_ids); HLOX_CMP(custom_call_target); HLOX_CMP(backend_config);
  HLOX_CMP(has_backend_config); HLOX_CMP(fusion_kind); HLOX_CMP(feature_index);
  HLOX_CMP(is_stable); HLOX_CMP(exponent_bits); HLOX_CMP(mantissa_bits); HLOX_CMP(left_side);
  HLOX_CMP(lower); HLOX_CMP(unit_diagonal); HLOX_CMP(transpose_a); HLOX_CMP(k); HLOX_CMP(largest);
  HLOX_CMP(fft_type); HLOX_CMP(fft_length); HLOX_CMP(lhs_ragged_dims); HLOX_CMP(rhs_group_dims);
  HLOX_CMP(num_carries); HLOX_CMP(is_reverse); HLOX_CMP(is_associative); HLOX_CMP(shuffle_mode);
  HLOX_CMP(shuffle_shifts); HLOX_CMP(shuffle_indices); HLOX_CMP(has_dynamic_root);
  HLOX_CMP(statistics); HLOX_CMP(original_value);
#undef HLOX_CMP
  if (std::bit_cast<uint32_t>(a.epsilon) != std::bit_cast<uint32_t>(b.epsilon)) d.push_back("epsilon");
  return d;
}

absl::Status CompareModules(const Module& a, const Module& b) {
  if (a.name() != b.name()) return Differ("module", "name", a.name(), b.name());
  if (a.header_attributes() != b.header_attributes()) return Differ("module", "header attributes", "", "");
  if (a.input_output_aliases() != b.input_output_aliases() || a.buffer_donors() != b.buffer_donors()) {
    return Differ("module", "input_output_alias / buffer_donor", "", "");
  }
  if (a.trailer() != b.trailer()) return Differ("module", "trailer", a.trailer().substr(0, 100), b.trailer().substr(0, 100));
  if (a.computations().size() != b.computations().size()) {
    return Differ("module", "computation count", std::to_string(a.computations().size()),
                  std::to_string(b.computations().size()));
  }
  std::string ea = a.entry() ? a.entry()->name() : "", eb = b.entry() ? b.entry()->name() : "";
  if (ea != eb) return Differ("module", "entry computation", ea, eb);
  for (size_t c = 0; c < a.computations().size(); ++c) {
    const Computation& ca = *a.computations()[c];
    const Computation& cb = *b.computations()[c];
    std::string w = absl::StrCat("computation '", ca.name(), "'");
    if (ca.name() != cb.name()) return Differ("module", "computation name", ca.name(), cb.name());
    if (ca.is_fusion_computation() != cb.is_fusion_computation()) return Differ(w, "fusion flag", "", "");
    if (ca.header_params() != cb.header_params() || ca.header_result() != cb.header_result() ||
        ca.execution_thread() != cb.execution_thread()) {
      return Differ(w, "signature", "", "");
    }
    if (ca.instruction_count() != cb.instruction_count()) {
      return Differ(w, "instruction count", std::to_string(ca.instruction_count()), std::to_string(cb.instruction_count()));
    }
    std::string ra = ca.root() ? ca.root()->name() : "", rb = cb.root() ? cb.root()->name() : "";
    if (ra != rb) return Differ(w, "root", ra, rb);
    auto ia = ca.instructions().begin();
    auto ib = cb.instructions().begin();
    for (; ia != ca.instructions().end(); ++ia, ++ib) {
      absl::Status s = CompareInstructions(**ia, **ib, w);
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace hlox
