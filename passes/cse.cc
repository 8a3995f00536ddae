// Common subexpression elimination as decisions: one site per instruction identical to an
// earlier one in the same computation (same opcode, shape with layout, operands up to earlier
// CSE, typed attributes, raw attributes except metadata, called computations and literal;
// operands of commutative ops compared as a set). Choice 1 replaces the later instruction by
// the first of its class. Random, side-effecting, parameter and elided-constant instructions
// never take part.
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/printer.h"
#include "passes/passes.h"
#include "passes/site_util.h"

namespace hlox {
namespace {

std::string Ints(const std::vector<int64_t>& v) { return absl::StrJoin(v, ","); }

// Text fingerprint of every typed attribute (all fields, so no opcode can be missed).
std::string AttributesKey(const Attributes& a) {
  std::string k = absl::StrCat("d", Ints(a.dimensions), "|s");
  for (const SliceDim& s : a.slice) absl::StrAppend(&k, s.start, ":", s.limit, ":", s.stride, ",");
  absl::StrAppend(&k, "|ds", Ints(a.dynamic_slice_sizes));
  if (a.dot) {
    absl::StrAppend(&k, "|dot", Ints(a.dot->lhs_batch), ";", Ints(a.dot->rhs_batch), ";",
                    Ints(a.dot->lhs_contracting), ";", Ints(a.dot->rhs_contracting));
  }
  if (a.window) {
    absl::StrAppend(&k, "|w");
    for (const WindowDimension& w : a.window->dims) {
      absl::StrAppend(&k, w.size, ",", w.stride, ",", w.pad_low, ",", w.pad_high, ",",
                      w.base_dilation, ",", w.window_dilation, ",", w.reversal, ";");
    }
  }
  if (a.conv) {
    const ConvDimensionNumbers& c = *a.conv;
    absl::StrAppend(&k, "|cv", c.input_batch, ",", c.input_feature, ",", Ints(c.input_spatial), ";",
                    c.kernel_input_feature, ",", c.kernel_output_feature, ",", Ints(c.kernel_spatial),
                    ";", c.output_batch, ",", c.output_feature, ",", Ints(c.output_spatial), ";", c.input_rank,
                    ",", c.kernel_rank, ",", c.output_rank);
  }
  absl::StrAppend(&k, "|fg", a.feature_group_count, "|bg", a.batch_group_count, "|p");
  for (const PaddingDim& p : a.padding) absl::StrAppend(&k, p.low, "_", p.high, "_", p.interior, "x");
  if (a.gather) {
    const GatherDimensionNumbers& g = *a.gather;
    absl::StrAppend(&k, "|g", Ints(g.offset_dims), ";", Ints(g.collapsed_slice_dims), ";",
                    Ints(g.start_index_map), ";", Ints(g.operand_batching_dims), ";",
                    Ints(g.start_indices_batching_dims), ";", g.index_vector_dim);
  }
  absl::StrAppend(&k, "|gs", Ints(a.gather_slice_sizes));
  if (a.scatter) {
    const ScatterDimensionNumbers& s = *a.scatter;
    absl::StrAppend(&k, "|sc", Ints(s.update_window_dims), ";", Ints(s.inserted_window_dims), ";",
                    Ints(s.scatter_dims_to_operand_dims), ";", Ints(s.input_batching_dims), ";",
                    Ints(s.scatter_indices_batching_dims), ";", s.index_vector_dim);
  }
  absl::StrAppend(&k, "|ix", a.indices_are_sorted, a.unique_indices);
  if (a.comparison) absl::StrAppend(&k, "|cmp", std::string(ComparisonDirectionName(*a.comparison)));
  absl::StrAppend(&k, "|ct", a.comparison_type, "|ti", a.tuple_index, "|io", a.iota_dimension,
                  "|pn", a.parameter_number);
  if (a.distribution) absl::StrAppend(&k, "|dist", static_cast<int>(*a.distribution));
  absl::StrAppend(&k, "|ra", a.rng_algorithm, "|rg");
  for (const auto& g : a.replica_groups) absl::StrAppend(&k, "{", Ints(g), "}");
  absl::StrAppend(&k, a.replica_groups_text, "|ch", a.channel_id.value_or(-1), a.use_global_device_ids,
                  "|cc", a.custom_call_target, "|bc", a.has_backend_config, a.backend_config.size(), ":",
                  a.backend_config, "|fk", static_cast<int>(a.fusion_kind), "|fi", a.feature_index,
                  "|eps", a.epsilon, "|st", a.is_stable, "|rp", a.exponent_bits, ",", a.mantissa_bits,
                  "|ts", a.left_side, a.lower, a.unit_diagonal, a.transpose_a, "|k", a.k, a.largest,
                  "|fft", a.fft_type, Ints(a.fft_length), "|rd", Ints(a.lhs_ragged_dims), ";",
                  Ints(a.rhs_group_dims), "|scan", a.num_carries, a.is_reverse,
                  a.is_associative ? (*a.is_associative ? 1 : 0) : -1, "|shuf", a.shuffle_mode,
                  Ints(a.shuffle_shifts), "|dr", a.has_dynamic_root);
  if (a.shuffle_indices) {
    absl::StrAppend(&k, "|si", a.shuffle_indices->shape().ToString(false), PrintLiteral(*a.shuffle_indices));
  }
  return k;
}

bool IsCommutative(const Instruction& i) {
  switch (i.opcode()) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMulhi:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      return true;
    case Opcode::kCompare:
      return i.attrs().comparison == ComparisonDirection::kEq ||
             i.attrs().comparison == ComparisonDirection::kNe;
    default:
      return false;
  }
}

bool Excluded(const Instruction& i) {
  if (i.opcode() == Opcode::kParameter || IsNondeterministicOrEffectful(i)) return true;
  if (i.opcode() == Opcode::kCustomCall) return true;  // unknown semantics; never merged
  if (i.has_literal() && i.literal().elided()) return true;  // seeded per instruction
  if (!i.control_predecessors().empty()) return true;
  return false;
}

// Identity key of `i` given canonical ids of its operands.
std::string InstructionKey(const Instruction& i, const std::unordered_map<const Instruction*, int64_t>& canon) {
  std::vector<int64_t> ops;
  for (const Instruction* op : i.operands()) ops.push_back(canon.at(op));
  if (IsCommutative(i)) std::sort(ops.begin(), ops.end());
  std::string k = absl::StrCat(std::string(OpcodeName(i.opcode())), "|", i.shape().ToString(true), "|", Ints(ops), "|");
  for (const Computation* c : i.called_computations()) absl::StrAppend(&k, c->name(), ",");
  absl::StrAppend(&k, "|", AttributesKey(i.attrs()), "|");
  for (const RawAttribute& r : i.raw_attributes()) {
    if (r.key != "metadata") absl::StrAppend(&k, r.key, "=", r.value, ";");
  }
  if (i.has_literal()) absl::StrAppend(&k, "|lit", PrintLiteral(i.literal()));
  return k;
}

class CsePass : public Pass {
 public:
  std::string_view name() const override { return "cse"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    for (Computation* comp : module.PostOrderComputations()) {
      std::unordered_map<const Instruction*, int64_t> canon;
      std::unordered_map<std::string, const Instruction*> first;
      int64_t next = 0;
      for (const Instruction* i : comp->PostOrder()) {
        if (Excluded(*i)) {
          canon[i] = next++;
          continue;
        }
        std::string key = InstructionKey(*i, canon);
        auto [it, inserted] = first.emplace(std::move(key), i);
        if (inserted) {
          canon[i] = next++;
        } else {
          canon[i] = canon.at(it->second);
          sites.push_back(MakeSite("identical", *i, {it->second}));
        }
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    auto apply = [](const DecisionSite&, int, const std::vector<Instruction*>& instrs,
                    InstructionIndex& index) -> absl::StatusOr<SiteOutcome> {
      Instruction* dup = instrs[0];
      Instruction* keep = instrs[1];
      if (dup->shape() != keep->shape()) return SiteOutcome::kStale;
      dup->ReplaceAllUsesWith(keep);
      RemoveDeadChain(dup, &index);
      return SiteOutcome::kApplied;
    };
    return ApplySitesInOrder(module, sites, decisions, apply);
  }
};

}  // namespace

std::unique_ptr<Pass> CreateCse() { return std::make_unique<CsePass>(); }

}  // namespace hlox
