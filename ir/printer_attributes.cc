// Canonical text of typed attributes and called computations. One fixed order for every
// opcode; an attribute prints when it differs from its default or when XLA always prints it
// for that opcode (dimensions= on reduce, index= on get-tuple-element, kind= on fusion, ...).
#include <charconv>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/computation.h"
#include "ir/printer.h"
#include "ir/printer_internal.h"

namespace hlox::printer_internal {
namespace {

std::string IntList(const std::vector<int64_t>& v) { return absl::StrCat("{", absl::StrJoin(v, ","), "}"); }

std::string FloatText(float f) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), f);
  (void)ec;
  return std::string(buf, p);
}

bool AlwaysPrintsDimensions(Opcode op) {
  switch (op) {
    case Opcode::kBroadcast: case Opcode::kReduce: case Opcode::kTranspose: case Opcode::kReverse:
    case Opcode::kConcatenate: case Opcode::kSort: case Opcode::kAllGather: case Opcode::kReduceScatter:
    case Opcode::kMap:
      return true;
    default:
      return false;
  }
}

// Label string of one side of dim_labels: `a`/`b` at the two special positions, digits for spatial
// dims, '?' at the positions none of them names (`rank` labels in all, when given).
std::string Labels(int64_t pa, int64_t pb, char a, char b, const std::vector<int64_t>& spatial, int64_t rank) {
  std::string s(std::max<int64_t>(static_cast<int64_t>(spatial.size()) + 2, rank), '?');
  auto put = [&](int64_t pos, char c) {
    if (pos >= 0 && pos < static_cast<int64_t>(s.size())) s[pos] = c;
  };
  put(pa, a);
  put(pb, b);
  for (size_t i = 0; i < spatial.size(); ++i) put(spatial[i], static_cast<char>('0' + i % 10));
  return s;
}

std::string WindowText(const Window& w) {
  if (w.dims.empty()) return "{}";
  auto join = [&](auto field) {
    std::vector<std::string> parts;
    for (const WindowDimension& d : w.dims) parts.push_back(field(d));
    return absl::StrJoin(parts, "x");
  };
  std::string out = "{size=" + join([](const WindowDimension& d) { return std::to_string(d.size); });
  auto any = [&](auto pred) {
    for (const WindowDimension& d : w.dims) {
      if (pred(d)) return true;
    }
    return false;
  };
  if (any([](const WindowDimension& d) { return d.stride != 1; })) {
    out += " stride=" + join([](const WindowDimension& d) { return std::to_string(d.stride); });
  }
  if (any([](const WindowDimension& d) { return d.pad_low != 0 || d.pad_high != 0; })) {
    out += " pad=" + join([](const WindowDimension& d) { return absl::StrCat(d.pad_low, "_", d.pad_high); });
  }
  if (any([](const WindowDimension& d) { return d.base_dilation != 1; })) {
    out += " lhs_dilate=" + join([](const WindowDimension& d) { return std::to_string(d.base_dilation); });
  }
  if (any([](const WindowDimension& d) { return d.window_dilation != 1; })) {
    out += " rhs_dilate=" + join([](const WindowDimension& d) { return std::to_string(d.window_dilation); });
  }
  if (any([](const WindowDimension& d) { return d.reversal; })) {
    out += " rhs_reversal=" + join([](const WindowDimension& d) { return std::string(d.reversal ? "1" : "0"); });
  }
  return out + "}";
}

std::string PaddingText(const std::vector<PaddingDim>& pads) {
  bool interior = false;
  for (const PaddingDim& p : pads) interior = interior || p.interior != 0;
  std::vector<std::string> parts;
  for (const PaddingDim& p : pads) {
    parts.push_back(interior ? absl::StrCat(p.low, "_", p.high, "_", p.interior) : absl::StrCat(p.low, "_", p.high));
  }
  return absl::StrJoin(parts, "x");
}

std::string NameList(const std::vector<Computation*>& comps) {
  std::vector<std::string> names;
  for (const Computation* c : comps) names.push_back("%" + c->name());
  return absl::StrCat("{", absl::StrJoin(names, ", "), "}");
}

}  // namespace

std::string CEscape(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (unsigned char c : bytes) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[5] = {'\\', static_cast<char>('0' + (c >> 6)), static_cast<char>('0' + ((c >> 3) & 7)),
                         static_cast<char>('0' + (c & 7)), 0};
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  return out;
}

void AppendTypedAttributes(const Instruction& instr, std::string* out) {
  const Attributes& a = instr.attrs();
  Opcode op = instr.opcode();
  auto add = [&](std::string_view key, const std::string& value) {
    absl::StrAppend(out, ", ", std::string(key), "=", value);
  };
  if (!a.dimensions.empty() || AlwaysPrintsDimensions(op)) add("dimensions", IntList(a.dimensions));
  if (!a.slice.empty() || op == Opcode::kSlice) {
    std::vector<std::string> parts;
    for (const SliceDim& s : a.slice) {
      parts.push_back(s.stride == 1 ? absl::StrCat("[", s.start, ":", s.limit, "]")
                                    : absl::StrCat("[", s.start, ":", s.limit, ":", s.stride, "]"));
    }
    add("slice", absl::StrCat("{", absl::StrJoin(parts, ", "), "}"));
  }
  if (!a.dynamic_slice_sizes.empty() || op == Opcode::kDynamicSlice) {
    add("dynamic_slice_sizes", IntList(a.dynamic_slice_sizes));
  }
  if (a.window) add("window", WindowText(*a.window));
  if (a.conv) {
    const ConvDimensionNumbers& c = *a.conv;
    add("dim_labels",
        absl::StrCat(Labels(c.input_batch, c.input_feature, 'b', 'f', c.input_spatial, c.input_rank), "_",
                     Labels(c.kernel_input_feature, c.kernel_output_feature, 'i', 'o', c.kernel_spatial, c.kernel_rank),
                     "->", Labels(c.output_batch, c.output_feature, 'b', 'f', c.output_spatial, c.output_rank)));
  }
  if (a.feature_group_count != 1) add("feature_group_count", std::to_string(a.feature_group_count));
  if (a.batch_group_count != 1) add("batch_group_count", std::to_string(a.batch_group_count));
  if (a.dot) {
    if (!a.dot->lhs_batch.empty()) add("lhs_batch_dims", IntList(a.dot->lhs_batch));
    if (!a.dot->rhs_batch.empty()) add("rhs_batch_dims", IntList(a.dot->rhs_batch));
    add("lhs_contracting_dims", IntList(a.dot->lhs_contracting));
    add("rhs_contracting_dims", IntList(a.dot->rhs_contracting));
  }
  if (op == Opcode::kRaggedDot) {
    add("lhs_ragged_dims", IntList(a.lhs_ragged_dims));
    if (!a.rhs_group_dims.empty()) add("rhs_group_dims", IntList(a.rhs_group_dims));
  }
  if (!a.padding.empty() || op == Opcode::kPad) add("padding", PaddingText(a.padding));
  if (a.gather) {
    const GatherDimensionNumbers& g = *a.gather;
    add("offset_dims", IntList(g.offset_dims));
    add("collapsed_slice_dims", IntList(g.collapsed_slice_dims));
    add("start_index_map", IntList(g.start_index_map));
    if (!g.operand_batching_dims.empty()) add("operand_batching_dims", IntList(g.operand_batching_dims));
    if (!g.start_indices_batching_dims.empty()) {
      add("start_indices_batching_dims", IntList(g.start_indices_batching_dims));
    }
    add("index_vector_dim", std::to_string(g.index_vector_dim));
  }
  if (!a.gather_slice_sizes.empty() || op == Opcode::kGather) add("slice_sizes", IntList(a.gather_slice_sizes));
  if (a.scatter) {
    const ScatterDimensionNumbers& s = *a.scatter;
    add("update_window_dims", IntList(s.update_window_dims));
    add("inserted_window_dims", IntList(s.inserted_window_dims));
    add("scatter_dims_to_operand_dims", IntList(s.scatter_dims_to_operand_dims));
    if (!s.input_batching_dims.empty()) add("input_batching_dims", IntList(s.input_batching_dims));
    if (!s.scatter_indices_batching_dims.empty()) {
      add("scatter_indices_batching_dims", IntList(s.scatter_indices_batching_dims));
    }
    add("index_vector_dim", std::to_string(s.index_vector_dim));
  }
  if (a.indices_are_sorted) add("indices_are_sorted", "true");
  if (a.unique_indices) add("unique_indices", "true");
  if (a.comparison) add("direction", std::string(ComparisonDirectionName(*a.comparison)));
  if (!a.comparison_type.empty()) add("type", a.comparison_type);
  if (op == Opcode::kGetTupleElement || a.tuple_index != 0) add("index", std::to_string(a.tuple_index));
  if (op == Opcode::kIota || a.iota_dimension != 0) add("iota_dimension", std::to_string(a.iota_dimension));
  if (a.distribution) {
    add("distribution", *a.distribution == RandomDistribution::kUniform ? "rng_uniform" : "rng_normal");
  }
  if (!a.rng_algorithm.empty()) add("algorithm", a.rng_algorithm);
  if (!a.replica_groups_text.empty()) {
    add("replica_groups", a.replica_groups_text);
  } else if (!a.replica_groups.empty()) {
    std::vector<std::string> groups;
    for (const auto& g : a.replica_groups) groups.push_back(IntList(g));
    add("replica_groups", absl::StrCat("{", absl::StrJoin(groups, ","), "}"));
  }
  if (a.channel_id) add("channel_id", std::to_string(*a.channel_id));
  if (a.use_global_device_ids) add("use_global_device_ids", "true");
  if (!a.custom_call_target.empty() || op == Opcode::kCustomCall) {
    add("custom_call_target", absl::StrCat("\"", CEscape(a.custom_call_target), "\""));
  }
  if (op == Opcode::kFusion) add("kind", std::string(FusionKindName(a.fusion_kind)));
  bool batch_norm = op == Opcode::kBatchNormGrad || op == Opcode::kBatchNormInference ||
                    op == Opcode::kBatchNormTraining;
  if (batch_norm) {
    add("epsilon", FloatText(a.epsilon));
    add("feature_index", std::to_string(a.feature_index));
  }
  if (a.is_stable) add("is_stable", "true");
  if (op == Opcode::kReducePrecision) {
    add("exponent_bits", std::to_string(a.exponent_bits));
    add("mantissa_bits", std::to_string(a.mantissa_bits));
  }
  if (op == Opcode::kTriangularSolve) {
    add("left_side", a.left_side ? "true" : "false");
    add("lower", a.lower ? "true" : "false");
    add("unit_diagonal", a.unit_diagonal ? "true" : "false");
    if (!a.transpose_a.empty()) add("transpose_a", a.transpose_a);
  }
  if (op == Opcode::kCholesky) add("lower", a.lower ? "true" : "false");
  if (op == Opcode::kTopK) {
    add("k", std::to_string(a.k));
    add("largest", a.largest ? "true" : "false");
  }
  if (op == Opcode::kFft) {
    if (!a.fft_type.empty()) add("fft_type", a.fft_type);
    add("fft_length", IntList(a.fft_length));
  }
  if (op == Opcode::kScan) {
    add("num_carries", std::to_string(a.num_carries));
    if (a.is_reverse) add("is_reverse", "true");
    if (a.is_associative) add("is_associative", *a.is_associative ? "true" : "false");
  }
  if (op == Opcode::kShuffle) {
    if (!a.shuffle_mode.empty()) add("mode", a.shuffle_mode);
    if (a.shuffle_mode == "rotate" || !a.shuffle_shifts.empty()) add("shifts", IntList(a.shuffle_shifts));
    if (a.shuffle_indices) {
      // The literal's braces would read as a layout after a shape without one: always give it.
      const Shape& s = a.shuffle_indices->shape();
      std::string shape = s.ToString();
      if (!s.layout() && s.rank() > 0) {
        std::vector<int64_t> minor_to_major;
        for (int64_t d = s.rank() - 1; d >= 0; --d) minor_to_major.push_back(d);
        shape += IntList(minor_to_major);
      }
      add("indices", absl::StrCat(shape, " ", PrintLiteral(*a.shuffle_indices)));
    }
  }
  if (a.has_dynamic_root) add("has_dynamic_root", "true");
  if (a.has_backend_config) add("backend_config", absl::StrCat("\"", CEscape(a.backend_config), "\""));
}

void AppendCalledComputations(const Instruction& instr, std::string* out) {
  const std::vector<Computation*>& called = instr.called_computations();
  if (called.empty()) return;
  auto ref = [](const Computation* c) { return "%" + c->name(); };
  switch (instr.opcode()) {
    case Opcode::kWhile:
      if (called.size() == 2) {
        absl::StrAppend(out, ", condition=", ref(called[0]), ", body=", ref(called[1]));
        return;
      }
      break;
    case Opcode::kConditional:
      if (called.size() == 2 && instr.operand_count() > 0 &&
          instr.operand(0)->shape().element_type() == PrimitiveType::kPred) {
        absl::StrAppend(out, ", true_computation=", ref(called[0]), ", false_computation=", ref(called[1]));
      } else {
        absl::StrAppend(out, ", branch_computations=", NameList(called));
      }
      return;
    case Opcode::kSelectAndScatter:
      if (called.size() == 2) {
        absl::StrAppend(out, ", select=", ref(called[0]), ", scatter=", ref(called[1]));
        return;
      }
      break;
    case Opcode::kFusion:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      if (called.size() == 1) {
        absl::StrAppend(out, ", calls=", ref(called[0]));
        return;
      }
      break;
    case Opcode::kCustomCall:
      break;
    default:
      if (called.size() == 1) {
        absl::StrAppend(out, ", to_apply=", ref(called[0]));
        return;
      }
  }
  absl::StrAppend(out, ", called_computations=", NameList(called));
}

}  // namespace hlox::printer_internal
