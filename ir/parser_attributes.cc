// Typed instruction attributes (dimensions, slices, windows, conv/dot/gather/scatter dimension
// numbers, padding, comparison, replica groups, custom-call target and backend config, ...;
// statistics and origin in parser_value_attributes.cc),
// computation references (to_apply, calls, condition/body, branches) and control predecessors.
// Every other attribute is kept verbatim, in text order, as a RawAttribute.
#include <algorithm>
#include <cctype>
#include <charconv>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "ir/parser_internal.h"

namespace hlox::parser_internal {
namespace {

bool ParseInt(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// Splits "a_bxc_d" style text: outer on 'x', inner on '_'.
std::vector<std::string> SplitOn(std::string_view s, char c) {
  return absl::StrSplit(std::string(s), c);
}

// Typed keys that XLA accepts on one family of opcodes only (it rejects them elsewhere as
// unexpected attributes). Keys not listed here are not restricted by opcode.
bool KeyFitsOpcode(std::string_view key, Opcode op) {
  if (key == "direction") return op == Opcode::kCompare;
  if (key == "iota_dimension") return op == Opcode::kIota;
  if (key == "slice") return op == Opcode::kSlice;
  if (key == "dynamic_slice_sizes") return op == Opcode::kDynamicSlice;
  if (key == "custom_call_target") return op == Opcode::kCustomCall;
  // Convolution-like custom calls (e.g. DynamicConvolutionForward) carry a window and dim labels too.
  if (key == "dim_labels" || key == "feature_group_count" || key == "batch_group_count") {
    return op == Opcode::kConvolution || op == Opcode::kCustomCall;
  }
  if (key == "window") {
    return op == Opcode::kConvolution || op == Opcode::kReduceWindow || op == Opcode::kSelectAndScatter ||
           op == Opcode::kCustomCall;
  }
  if (key == "lhs_batch_dims" || key == "rhs_batch_dims" || key == "lhs_contracting_dims" ||
      key == "rhs_contracting_dims") {
    return op == Opcode::kDot || op == Opcode::kRaggedDot || op == Opcode::kScaledDot;
  }
  if (key == "lhs_ragged_dims" || key == "rhs_group_dims") return op == Opcode::kRaggedDot;
  if (key == "num_carries" || key == "is_reverse" || key == "is_associative") return op == Opcode::kScan;
  if (key == "shifts" || key == "indices") return op == Opcode::kShuffle;
  if (key == "has_dynamic_root") return op == Opcode::kCollectiveBroadcast || op == Opcode::kCollectiveReduce;
  return true;
}

// Every instruction attribute XLA's parser defines (on any opcode, including ones hlox does not
// have and older spellings still found in dumps). A key hlox neither types nor checks is kept as
// text only when it is one of these; any other key is an error, as XLA rejects it.
bool IsXlaAttributeKey(std::string_view key) {
  static const absl::flat_hash_set<std::string_view> kKeys = {
      // Any instruction.
      "sharding", "frontend_attributes", "statistics", "parameter_replication", "control-predecessors",
      "origin", "original_value", "metadata", "backend_config", "result_accuracy",
      // Called computations.
      "to_apply", "calls", "called_computations", "condition", "body", "true_computation",
      "false_computation", "branch_computations", "select", "scatter",
      // Shapes, windows, dot and convolution.
      "dimensions", "slice", "dynamic_slice_sizes", "index", "iota_dimension", "direction", "type",
      "window", "dim_labels", "feature_group_count", "batch_group_count", "conv_kind",
      "operand_precision", "algorithm", "sparsity", "lhs_contracting_dims", "rhs_contracting_dims",
      "lhs_batch_dims", "rhs_batch_dims", "lhs_ragged_dims", "rhs_group_dims", "padding",
      "inferred_dimension",
      // Random numbers.
      "distribution", "delta",
      // Collectives and channels.
      "replica_groups", "channel_id", "use_global_device_ids", "constrain_layout", "mode",
      "source_target_pairs", "slice_sizes", "is_host_transfer", "all_reduce_id",
      // Gather and scatter.
      "offset_dims", "collapsed_slice_dims", "start_index_map", "index_vector_dim",
      "operand_batching_dims", "start_indices_batching_dims", "indices_are_sorted", "unique_indices",
      "update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
      "input_batching_dims", "scatter_indices_batching_dims",
      // Custom calls.
      "custom_call_target", "api_version", "custom_call_schedule", "schedule",
      "operand_layout_constraints", "output_to_operand_aliasing", "custom_call_has_side_effect",
      "literal", "padding_type",
      // Other opcodes.
      "kind", "fft_type", "fft_length", "feature_index", "epsilon", "is_stable", "exponent_bits",
      "mantissa_bits", "left_side", "lower", "unit_diagonal", "transpose_a", "k", "largest",
      "infeed_config", "outfeed_config", "outfeed_shape", "async_execution_thread", "async_group_id",
      "cross_program_prefetch_index", "is_cross_program_prefetch", "is_composite", "domain",
      "num_carries", "is_reverse", "is_associative", "shifts", "indices", "has_dynamic_root"};
  return kKeys.contains(key);
}

bool IsCallKey(Opcode op, std::string_view key) {
  if (key == "to_apply" || key == "calls" || key == "called_computations") return true;
  if (op == Opcode::kWhile) return key == "condition" || key == "body";
  if (op == Opcode::kConditional) {
    return key == "true_computation" || key == "false_computation" || key == "branch_computations";
  }
  if (op == Opcode::kSelectAndScatter) return key == "select" || key == "scatter";
  return false;
}

}  // namespace

absl::Status Parser::ParseIntList(std::vector<int64_t>* out) {
  out->clear();
  HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open an integer list"));
  if (lex_.TryConsume('}')) return absl::OkStatus();
  while (true) {
    int64_t v;
    HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&v, "list element"));
    out->push_back(v);
    if (lex_.TryConsume('}')) return absl::OkStatus();
    HLOX_RETURN_IF_ERROR(lex_.Expect(',', "or '}' in an integer list"));
  }
}

absl::Status Parser::ParseBool(bool* out) {
  if (lex_.TryConsumeWord("true")) {
    *out = true;
  } else if (lex_.TryConsumeWord("false")) {
    *out = false;
  } else {
    return lex_.Error("expected true or false");
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseWord(std::string* out, std::string_view what) {
  std::string_view w = lex_.ConsumeName();
  if (w.empty()) return lex_.Error(absl::StrCat("expected ", std::string(what)));
  *out = std::string(w);
  return absl::OkStatus();
}

absl::Status Parser::ParseFloat(float* out) {
  size_t start = lex_.SkipSpace();
  std::string_view t = lex_.PeekNumberText();
  if (t.empty()) return lex_.Error("expected a number");
  const char* b = t.data() + (t[0] == '+' ? 1 : 0);
  auto [p, ec] = std::from_chars(b, t.data() + t.size(), *out);
  if (ec != std::errc() || p != t.data() + t.size()) return lex_.ErrorAt(start, "invalid number");
  lex_.set_pos(start + t.size());
  return absl::OkStatus();
}

absl::Status Parser::ParseNameList(std::vector<NameRef>* out) {
  if (!lex_.TryConsume('{')) {
    size_t pos = lex_.SkipSpace();
    std::string_view n = lex_.ConsumeName();
    if (n.empty()) return lex_.Error("expected a name");
    out->push_back({std::string(n), pos, std::nullopt});
    return absl::OkStatus();
  }
  if (lex_.TryConsume('}')) return absl::OkStatus();
  while (true) {
    size_t pos = lex_.SkipSpace();
    std::string_view n = lex_.ConsumeName();
    if (n.empty()) return lex_.Error("expected a name");
    out->push_back({std::string(n), pos, std::nullopt});
    if (lex_.TryConsume('}')) return absl::OkStatus();
    HLOX_RETURN_IF_ERROR(lex_.Expect(',', "or '}' in a name list"));
  }
}

absl::Status Parser::ParseWindow(Window* out) {
  out->dims.clear();
  HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open the window"));
  while (!lex_.TryConsume('}')) {
    size_t key_pos = lex_.SkipSpace();
    std::string_view key = lex_.ConsumeName();
    if (key.empty()) return lex_.Error("expected a window field or '}'");
    HLOX_RETURN_IF_ERROR(lex_.Expect('=', "after a window field"));
    size_t val_pos = lex_.SkipSpace();
    std::string_view val = lex_.ConsumeName();
    if (val.empty()) return lex_.Error("expected a window value such as 3x3");
    std::vector<std::string> parts = SplitOn(val, 'x');
    if (key == "size" && out->dims.empty()) out->dims.resize(parts.size());
    if (parts.size() != out->dims.size()) {
      return lex_.ErrorAt(val_pos, absl::StrCat("window field '", std::string(key), "' has ", parts.size(),
                                                " dimensions, expected ", out->dims.size()));
    }
    for (size_t i = 0; i < parts.size(); ++i) {
      WindowDimension& d = out->dims[i];
      int64_t v = 0;
      if (key == "pad") {
        std::vector<std::string> lh = SplitOn(parts[i], '_');
        if (lh.size() != 2 || !ParseInt(lh[0], &d.pad_low) || !ParseInt(lh[1], &d.pad_high)) {
          return lex_.ErrorAt(val_pos, "window pad must look like 0_1x1_1");
        }
        continue;
      }
      if (!ParseInt(parts[i], &v)) return lex_.ErrorAt(val_pos, "expected integers separated by 'x'");
      if (key == "size") {
        d.size = v;
      } else if (key == "stride") {
        d.stride = v;
      } else if (key == "lhs_dilate") {
        d.base_dilation = v;
      } else if (key == "rhs_dilate") {
        d.window_dilation = v;
      } else if (key == "rhs_reversal") {
        d.reversal = v != 0;
      } else {
        return lex_.ErrorAt(key_pos, absl::StrCat("unknown window field '", std::string(key), "'"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseConvDims(ConvDimensionNumbers* out, bool allow_unknown) {
  size_t pos = lex_.SkipSpace();
  // '?' is not a name character: the label strings are read up to "->" and the next separator.
  auto labels_until = [&](std::string_view stops) {
    size_t start = lex_.pos(), end = start;
    const std::string_view text = lex_.text();
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_' ||
                                 text[end] == '?') &&
           stops.find(text[end]) == std::string_view::npos) {
      ++end;
    }
    lex_.set_pos(end);
    return text.substr(start, end - start);
  };
  std::string_view lhs_rhs = labels_until("-");
  if (!lex_.TryConsume("->")) return lex_.Error("expected '->' in dim_labels");
  std::string_view result = labels_until("");
  std::vector<std::string> io = SplitOn(lhs_rhs, '_');
  if (io.size() != 2 || result.empty()) return lex_.ErrorAt(pos, "dim_labels must look like b01f_01io->b01f");
  // Each label string has its two special letters and digits 0..N-1 for the spatial dims.
  bool unknown = false;
  auto parse = [&](std::string_view labels, char a, char b, int64_t* pa, int64_t* pb,
                   std::vector<int64_t>* spatial) -> absl::Status {
    *pa = *pb = -1;
    std::vector<int64_t> sp(labels.size(), -1);
    size_t n_spatial = 0;
    for (size_t i = 0; i < labels.size(); ++i) {
      char c = labels[i];
      int64_t idx = static_cast<int64_t>(i);
      if (c == a && *pa < 0) {
        *pa = idx;
      } else if (c == b && *pb < 0) {
        *pb = idx;
      } else if (c >= '0' && c <= '9' && static_cast<size_t>(c - '0') < labels.size() && sp[c - '0'] < 0) {
        sp[c - '0'] = idx;
        ++n_spatial;
      } else if (c == '?' && allow_unknown) {
        unknown = true;
      } else {
        return lex_.ErrorAt(pos, absl::StrCat("invalid dim_labels '", std::string(labels), "'"));
      }
    }
    if (*pa < 0 || *pb < 0) return lex_.ErrorAt(pos, absl::StrCat("invalid dim_labels '", std::string(labels), "'"));
    spatial->clear();
    for (size_t i = 0; i < n_spatial; ++i) {
      if (sp[i] < 0) return lex_.ErrorAt(pos, "dim_labels spatial digits must be 0..N-1");
      spatial->push_back(sp[i]);
    }
    return absl::OkStatus();
  };
  HLOX_RETURN_IF_ERROR(parse(io[0], 'b', 'f', &out->input_batch, &out->input_feature, &out->input_spatial));
  HLOX_RETURN_IF_ERROR(parse(io[1], 'i', 'o', &out->kernel_input_feature, &out->kernel_output_feature,
                             &out->kernel_spatial));
  HLOX_RETURN_IF_ERROR(parse(result, 'b', 'f', &out->output_batch, &out->output_feature, &out->output_spatial));
  if (unknown) {
    out->input_rank = static_cast<int64_t>(io[0].size());
    out->kernel_rank = static_cast<int64_t>(io[1].size());
    out->output_rank = static_cast<int64_t>(result.size());
  }
  if (out->input_spatial.size() != out->kernel_spatial.size() ||
      out->input_spatial.size() != out->output_spatial.size()) {
    return lex_.ErrorAt(pos, "dim_labels have different numbers of spatial dimensions");
  }
  return absl::OkStatus();
}

absl::Status Parser::ParsePadding(std::vector<PaddingDim>* out) {
  size_t pos = lex_.SkipSpace();
  std::string_view val = lex_.ConsumeName();
  if (val.empty()) return lex_.Error("expected padding such as 0_0x1_1");
  out->clear();
  for (const std::string& part : SplitOn(val, 'x')) {
    std::vector<std::string> f = SplitOn(part, '_');
    PaddingDim d;
    if ((f.size() != 2 && f.size() != 3) || !ParseInt(f[0], &d.low) || !ParseInt(f[1], &d.high) ||
        (f.size() == 3 && !ParseInt(f[2], &d.interior))) {
      return lex_.ErrorAt(pos, "padding must look like low_high_interior, separated by 'x'");
    }
    if (d.interior < 0) return lex_.ErrorAt(pos, "negative interior padding");
    out->push_back(d);
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseSlices(std::vector<SliceDim>* out) {
  out->clear();
  HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open the slice"));
  if (lex_.TryConsume('}')) return absl::OkStatus();
  while (true) {
    SliceDim d;
    HLOX_RETURN_IF_ERROR(lex_.Expect('[', "to open a slice dimension"));
    HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&d.start, "slice start"));
    HLOX_RETURN_IF_ERROR(lex_.Expect(':', "after the slice start"));
    HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&d.limit, "slice limit"));
    if (lex_.TryConsume(':')) HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&d.stride, "slice stride"));
    HLOX_RETURN_IF_ERROR(lex_.Expect(']', "to close a slice dimension"));
    out->push_back(d);
    if (lex_.TryConsume('}')) return absl::OkStatus();
    HLOX_RETURN_IF_ERROR(lex_.Expect(',', "or '}' in the slice"));
  }
}

// Mesh-axes form: mesh['x'=2,'y'=4] {'y'}: a device mesh of named axes and sizes, and the axes
// along which each group varies. Checked (positive sizes, distinct names, listed axes in the
// mesh, each once) and kept as text, like the iota form.
absl::Status Parser::ParseMeshReplicaGroups(Attributes* a) {
  const size_t start = lex_.SkipSpace();
  lex_.ConsumeName();  // mesh
  auto quoted = [&](std::string* out) -> absl::Status {
    lex_.SkipSpace();
    const std::string_view text = lex_.text();
    size_t p = lex_.pos();
    if (p >= text.size() || text[p] != '\'') return lex_.Error("expected a quoted axis name ('name')");
    const size_t end = text.find('\'', p + 1);
    if (end == std::string_view::npos || end == p + 1) return lex_.ErrorAt(p, "unterminated or empty axis name");
    *out = std::string(text.substr(p + 1, end - p - 1));
    lex_.set_pos(end + 1);
    return absl::OkStatus();
  };
  HLOX_RETURN_IF_ERROR(lex_.Expect('[', "to open the mesh axes"));
  std::vector<std::string> axes;
  while (true) {
    std::string name;
    HLOX_RETURN_IF_ERROR(quoted(&name));
    if (std::find(axes.begin(), axes.end(), name) != axes.end()) {
      return lex_.Error(absl::StrCat("mesh axis '", name, "' given twice"));
    }
    axes.push_back(name);
    HLOX_RETURN_IF_ERROR(lex_.Expect('=', "after a mesh axis name"));
    const size_t size_pos = lex_.SkipSpace();
    int64_t size;
    HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&size, "mesh axis size"));
    if (size <= 0) return lex_.ErrorAt(size_pos, "mesh axis sizes must be positive");
    if (lex_.TryConsume(']')) break;
    HLOX_RETURN_IF_ERROR(lex_.Expect(',', "or ']' in the mesh axes"));
  }
  HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open the axes the replica groups vary along"));
  std::vector<std::string> used;
  if (!lex_.TryConsume('}')) {
    while (true) {
      const size_t name_pos = lex_.SkipSpace();
      std::string name;
      HLOX_RETURN_IF_ERROR(quoted(&name));
      if (std::find(axes.begin(), axes.end(), name) == axes.end()) {
        return lex_.ErrorAt(name_pos, absl::StrCat("axis '", name, "' is not in the mesh"));
      }
      if (std::find(used.begin(), used.end(), name) != used.end()) {
        return lex_.ErrorAt(name_pos, absl::StrCat("axis '", name, "' listed twice"));
      }
      used.push_back(name);
      if (lex_.TryConsume('}')) break;
      HLOX_RETURN_IF_ERROR(lex_.Expect(',', "or '}' in the replica group axes"));
    }
  }
  a->replica_groups_text = std::string(lex_.text().substr(start, lex_.pos() - start));
  return absl::OkStatus();
}

absl::Status Parser::ParseReplicaGroups(Attributes* a) {
  a->replica_groups.clear();
  a->replica_groups_text.clear();
  if (lex_.Peek() == '[') {  // iota form [groups,size]<=[4] or [2,2]<=[2,2]T(1,0), kept as text
    const size_t start = lex_.SkipSpace();
    std::vector<int64_t> dims;
    HLOX_RETURN_IF_ERROR(ParseIntListIn('[', ']', &dims, "replica group dimensions"));
    if (dims.size() != 2 || dims[0] <= 0 || dims[1] <= 0 || dims[0] > (int64_t{1} << 30) / dims[1]) {
      return lex_.ErrorAt(start, "iota replica groups need [number of groups, group size], both positive");
    }
    const size_t iota_pos = lex_.SkipSpace();
    if (!lex_.TryConsume("<=")) return lex_.Error("expected '<=' after the replica group dimensions");
    HLOX_RETURN_IF_ERROR(ParseIotaTail(dims[0] * dims[1], iota_pos, "iota replica groups"));
    std::string_view text = lex_.text().substr(start, lex_.pos() - start);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    a->replica_groups_text = std::string(text);
    return absl::OkStatus();
  }
  if (lex_.PeekName() == "mesh") return ParseMeshReplicaGroups(a);
  HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open replica_groups"));
  if (lex_.TryConsume('}')) return absl::OkStatus();
  while (true) {
    a->replica_groups.emplace_back();
    HLOX_RETURN_IF_ERROR(ParseIntList(&a->replica_groups.back()));
    if (lex_.TryConsume('}')) return absl::OkStatus();
    HLOX_RETURN_IF_ERROR(lex_.Expect(',', "or '}' in replica_groups"));
  }
}

absl::Status Parser::ParseAttribute(std::string_view key, size_t key_pos, PendingInstr* p) {
  // The value is read first, so its own errors are reported first; then whether the key fits.
  HLOX_RETURN_IF_ERROR(ParseAttributeValue(key, key_pos, p));
  Opcode op = p->instr->opcode();
  if (!KeyFitsOpcode(key, op)) {
    return lex_.ErrorAt(key_pos, absl::StrCat("attribute '", std::string(key), "' does not apply to ",
                                              std::string(OpcodeName(op))));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseAttributeValue(std::string_view key, size_t key_pos, PendingInstr* p) {
  Instruction* instr = p->instr.get();
  Opcode op = instr->opcode();
  Attributes& a = instr->attrs();
  if (IsCallKey(op, key)) {
    p->calls.emplace_back(std::string(key), std::vector<NameRef>{});
    return ParseNameList(&p->calls.back().second);
  }
  if (key == "control-predecessors") return ParseNameList(&p->control_preds);
  if (key == "dimensions") return ParseIntList(&a.dimensions);
  if (key == "slice") return ParseSlices(&a.slice);
  if (key == "dynamic_slice_sizes") return ParseIntList(&a.dynamic_slice_sizes);
  auto dot = [&]() -> DotDimensionNumbers& {
    if (!a.dot) a.dot.emplace();
    return *a.dot;
  };
  if (key == "lhs_batch_dims") return ParseIntList(&dot().lhs_batch);
  if (key == "rhs_batch_dims") return ParseIntList(&dot().rhs_batch);
  if (key == "lhs_contracting_dims") return ParseIntList(&dot().lhs_contracting);
  if (key == "rhs_contracting_dims") return ParseIntList(&dot().rhs_contracting);
  if (key == "lhs_ragged_dims") {
    // XLA's verifier allows one ragged dimension; reported here, at the attribute.
    HLOX_RETURN_IF_ERROR(ParseIntList(&a.lhs_ragged_dims));
    if (a.lhs_ragged_dims.size() != 1) {
      return lex_.ErrorAt(key_pos, absl::StrCat("lhs_ragged_dims must name exactly one dimension, names ",
                                                a.lhs_ragged_dims.size()));
    }
    return absl::OkStatus();
  }
  if (key == "rhs_group_dims") return ParseIntList(&a.rhs_group_dims);
  if (key == "window") {
    a.window.emplace();
    return ParseWindow(&*a.window);
  }
  if (key == "dim_labels") {
    a.conv.emplace();
    return ParseConvDims(&*a.conv, op == Opcode::kCustomCall);
  }
  if (key == "feature_group_count") return lex_.ConsumeInt(&a.feature_group_count, "feature_group_count");
  if (key == "batch_group_count") return lex_.ConsumeInt(&a.batch_group_count, "batch_group_count");
  if (key == "padding" && op == Opcode::kPad) return ParsePadding(&a.padding);
  if (op == Opcode::kGather) {
    auto g = [&]() -> GatherDimensionNumbers& {
      if (!a.gather) a.gather.emplace();
      return *a.gather;
    };
    if (key == "offset_dims") return ParseIntList(&g().offset_dims);
    if (key == "collapsed_slice_dims") return ParseIntList(&g().collapsed_slice_dims);
    if (key == "start_index_map") return ParseIntList(&g().start_index_map);
    if (key == "operand_batching_dims") return ParseIntList(&g().operand_batching_dims);
    if (key == "start_indices_batching_dims") return ParseIntList(&g().start_indices_batching_dims);
    if (key == "index_vector_dim") return lex_.ConsumeInt(&g().index_vector_dim, "index_vector_dim");
    if (key == "slice_sizes") return ParseIntList(&a.gather_slice_sizes);
  }
  if (op == Opcode::kScatter) {
    auto s = [&]() -> ScatterDimensionNumbers& {
      if (!a.scatter) a.scatter.emplace();
      return *a.scatter;
    };
    if (key == "update_window_dims") return ParseIntList(&s().update_window_dims);
    if (key == "inserted_window_dims") return ParseIntList(&s().inserted_window_dims);
    if (key == "scatter_dims_to_operand_dims") return ParseIntList(&s().scatter_dims_to_operand_dims);
    if (key == "input_batching_dims") return ParseIntList(&s().input_batching_dims);
    if (key == "scatter_indices_batching_dims") return ParseIntList(&s().scatter_indices_batching_dims);
    if (key == "index_vector_dim") return lex_.ConsumeInt(&s().index_vector_dim, "index_vector_dim");
  }
  if (key == "indices_are_sorted") return ParseBool(&a.indices_are_sorted);
  if (key == "unique_indices") return ParseBool(&a.unique_indices);
  if (key == "direction") {
    size_t pos = lex_.SkipSpace();
    std::string_view w = lex_.ConsumeName();
    a.comparison = ParseComparisonDirection(w);
    if (!a.comparison) return lex_.ErrorAt(pos, absl::StrCat("unknown comparison direction '", std::string(w), "'"));
    return absl::OkStatus();
  }
  if (key == "type" && op == Opcode::kCompare) return ParseWord(&a.comparison_type, "a comparison type");
  if (key == "index" && op == Opcode::kGetTupleElement) {
    size_t pos = lex_.SkipSpace();
    HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&a.tuple_index, "tuple index"));
    if (a.tuple_index < 0) return lex_.ErrorAt(pos, "negative tuple index");
    return absl::OkStatus();
  }
  if (key == "iota_dimension") return lex_.ConsumeInt(&a.iota_dimension, "iota_dimension");
  if (key == "distribution" && op == Opcode::kRng) {
    size_t pos = lex_.SkipSpace();
    std::string_view w = lex_.ConsumeName();
    if (w == "rng_uniform") {
      a.distribution = RandomDistribution::kUniform;
    } else if (w == "rng_normal") {
      a.distribution = RandomDistribution::kNormal;
    } else {
      return lex_.ErrorAt(pos, absl::StrCat("unknown distribution '", std::string(w), "'"));
    }
    return absl::OkStatus();
  }
  if (key == "algorithm" && op == Opcode::kRngBitGenerator) return ParseWord(&a.rng_algorithm, "an RNG algorithm");
  if (key == "replica_groups") return ParseReplicaGroups(&a);
  if (key == "channel_id") {
    int64_t v;
    HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&v, "channel_id"));
    a.channel_id = v;
    return absl::OkStatus();
  }
  if (key == "use_global_device_ids") return ParseBool(&a.use_global_device_ids);
  if (key == "custom_call_target") return lex_.ConsumeString(&a.custom_call_target);
  if (key == "backend_config") {
    a.has_backend_config = true;
    if (lex_.Peek() == '"') return lex_.ConsumeString(&a.backend_config);
    std::string_view raw;  // newer dumps print the JSON unquoted: backend_config={...}
    HLOX_RETURN_IF_ERROR(lex_.ConsumeRawValue(&raw));
    a.backend_config = std::string(raw);
    return absl::OkStatus();
  }
  if (key == "kind" && op == Opcode::kFusion) {
    size_t pos = lex_.SkipSpace();
    std::string_view w = lex_.ConsumeName();
    std::optional<FusionKind> k = ParseFusionKind(w);
    if (!k) return lex_.ErrorAt(pos, absl::StrCat("unknown fusion kind '", std::string(w), "'"));
    a.fusion_kind = *k;
    return absl::OkStatus();
  }
  bool batch_norm = op == Opcode::kBatchNormGrad || op == Opcode::kBatchNormInference ||
                    op == Opcode::kBatchNormTraining;
  if (key == "feature_index" && batch_norm) return lex_.ConsumeInt(&a.feature_index, "feature_index");
  if (key == "epsilon" && batch_norm) return ParseFloat(&a.epsilon);
  if (key == "is_stable" && (op == Opcode::kSort || op == Opcode::kTopK)) return ParseBool(&a.is_stable);
  if (op == Opcode::kReducePrecision) {
    if (key == "exponent_bits") return lex_.ConsumeInt(&a.exponent_bits, "exponent_bits");
    if (key == "mantissa_bits") return lex_.ConsumeInt(&a.mantissa_bits, "mantissa_bits");
  }
  if (op == Opcode::kTriangularSolve || op == Opcode::kCholesky) {
    if (key == "left_side") return ParseBool(&a.left_side);
    if (key == "lower") return ParseBool(&a.lower);
    if (key == "unit_diagonal") return ParseBool(&a.unit_diagonal);
    if (key == "transpose_a") return ParseWord(&a.transpose_a, "NO_TRANSPOSE, TRANSPOSE or ADJOINT");
  }
  if (op == Opcode::kTopK) {
    if (key == "k") return lex_.ConsumeInt(&a.k, "k");
    if (key == "largest") return ParseBool(&a.largest);
  }
  if (op == Opcode::kFft) {
    if (key == "fft_type") return ParseWord(&a.fft_type, "FFT, IFFT, RFFT or IRFFT");
    if (key == "fft_length") return ParseIntList(&a.fft_length);
  }
  if (op == Opcode::kScan) {
    if (key == "num_carries") {
      size_t pos = lex_.SkipSpace();
      HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&a.num_carries, "num_carries"));
      if (a.num_carries < 0) return lex_.ErrorAt(pos, "negative num_carries");
      return absl::OkStatus();
    }
    if (key == "is_reverse") return ParseBool(&a.is_reverse);
    if (key == "is_associative") {
      bool v = false;
      HLOX_RETURN_IF_ERROR(ParseBool(&v));
      a.is_associative = v;
      return absl::OkStatus();
    }
  }
  if (op == Opcode::kShuffle) {
    if (key == "mode") {
      size_t pos;
      std::string_view w;
      HLOX_RETURN_IF_ERROR(ParseWordFrom("a shuffle mode", &pos, &w));
      if (w != "rotate" && w != "permute") {
        return lex_.ErrorAt(pos, absl::StrCat("unknown shuffle mode '", std::string(w), "': expected rotate or permute"));
      }
      a.shuffle_mode = std::string(w);
      return absl::OkStatus();
    }
    if (key == "shifts") return ParseIntList(&a.shuffle_shifts);
    if (key == "indices") {
      size_t pos = lex_.SkipSpace();
      Shape s;
      HLOX_RETURN_IF_ERROR(ParseShape(&s));
      if (!s.IsArray() || !IsInteger(s.element_type())) {
        return lex_.ErrorAt(pos, absl::StrCat("shuffle indices must be an integer array, not ", s.ToString()));
      }
      a.shuffle_indices.emplace();
      return ParseLiteral(s, &*a.shuffle_indices);
    }
  }
  if (key == "has_dynamic_root" && (op == Opcode::kCollectiveBroadcast || op == Opcode::kCollectiveReduce)) {
    return ParseBool(&a.has_dynamic_root);
  }
  if (key == "statistics") {
    a.statistics.emplace();
    return ParseStatistics(&*a.statistics);
  }
  if (key == "origin" || key == "original_value") {  // the current and the older spelling
    if (a.original_value) return lex_.ErrorAt(key_pos, "origin given twice (as origin and original_value)");
    size_t pos = lex_.SkipSpace();
    a.original_value.emplace();
    HLOX_RETURN_IF_ERROR(ParseOriginalValue(&*a.original_value));
    if (!p->infer_shape) return CheckOriginalValue(*a.original_value, instr->shape(), pos);
    origin_checks_.push_back({instr, pos});  // checked once the shape is inferred
    return absl::OkStatus();
  }
  bool handled = false;
  HLOX_RETURN_IF_ERROR(ParseCheckedAttribute(key, key_pos, p, &handled));
  if (handled) return absl::OkStatus();
  if (!IsXlaAttributeKey(key)) {
    return lex_.ErrorAt(key_pos, absl::StrCat("unknown attribute '", std::string(key), "'"));
  }
  // Keys typed above for their opcodes only: here they sit on another opcode, which XLA rejects
  // ("unexpected attribute").
  static const absl::flat_hash_set<std::string_view> kOpcodeTypedKeys = {
      "index", "distribution", "algorithm", "kind", "feature_index", "epsilon", "is_stable",
      "exponent_bits", "mantissa_bits", "left_side", "lower", "unit_diagonal", "transpose_a", "k",
      "largest", "fft_type", "fft_length", "num_carries", "is_reverse", "is_associative", "shifts",
      "indices", "has_dynamic_root"};
  if (kOpcodeTypedKeys.contains(key)) {
    return lex_.ErrorAt(key_pos, absl::StrCat("attribute '", std::string(key), "' does not apply to ",
                                              std::string(OpcodeName(op))));
  }
  std::string_view raw;
  HLOX_RETURN_IF_ERROR(lex_.ConsumeRawValue(&raw));
  instr->raw_attributes().push_back({std::string(key), std::string(raw)});
  return absl::OkStatus();
}

}  // namespace hlox::parser_internal
