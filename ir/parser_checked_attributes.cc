// Attributes hlox checks but keeps as text (the printer writes them back verbatim):
// custom-call api_version, custom_call_schedule and operand_layout_constraints, dot
// sparsity descriptors and algorithms, result_accuracy on transcendental ops, metadata and sharding
// (parser_sharding.cc). A malformed value, or one
// XLA does not know, is an error at its column.
#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "ir/parser_internal.h"

namespace hlox::parser_internal {
namespace {

constexpr std::array<std::string_view, 5> kApiVersions = {
    "API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
    "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
// XLA's PrecisionConfig algorithms as its text spells them (the enum names, lower case, without
// the "alg_" prefix).
constexpr std::array<std::string_view, 14> kDotAlgorithms = {
    "unset", "dot_any_f8_any_f8_f32", "dot_any_f8_any_f8_f32_fast_accum", "dot_f16_f16_f16",
    "dot_f16_f16_f32", "dot_bf16_bf16_bf16", "dot_bf16_bf16_f32", "dot_bf16_bf16_f32_x3",
    "dot_bf16_bf16_f32_x6", "dot_bf16_bf16_f32_x9", "dot_tf32_tf32_f32", "dot_tf32_tf32_f32_x3",
    "dot_f32_f32_f32", "dot_f64_f64_f64"};
constexpr std::array<std::string_view, 3> kSchedules = {"SCHEDULE_NONE", "SCHEDULE_LATEST", "SCHEDULE_EARLIEST"};

template <size_t N>
bool OneOf(const std::array<std::string_view, N>& names, std::string_view w) {
  for (std::string_view n : names) {
    if (n == w) return true;
  }
  return false;
}

// The ops XLA gives a result_accuracy attribute: the transcendental unary functions.
bool TakesResultAccuracy(Opcode op) {
  switch (op) {
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kSqrt:
    case Opcode::kCbrt:
    case Opcode::kRsqrt:
    case Opcode::kTanh:
    case Opcode::kSin:
    case Opcode::kCos:
    case Opcode::kTan:
    case Opcode::kErf:
    case Opcode::kAcos:
    case Opcode::kAtan:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtanh:
    case Opcode::kCosh:
    case Opcode::kSinh:
      return true;
    default:
      return false;
  }
}

// One dot sparsity descriptor "L.1@2:4": operand L or R, dimension >= 0, n >= 1, m > n.
bool ValidSparsity(const std::string& item) {
  std::vector<std::string> at = absl::StrSplit(item, '@');
  if (at.size() != 2 || at[0].size() < 3 || (at[0][0] != 'L' && at[0][0] != 'R') || at[0][1] != '.') return false;
  std::vector<std::string> nm = absl::StrSplit(at[1], ':');
  int64_t dim, n, m;
  auto num = [](const std::string& s, int64_t* v) {
    return !s.empty() && s.size() < 10 && s.find_first_not_of("0123456789") == std::string::npos &&
           (*v = std::stoll(s), true);
  };
  return nm.size() == 2 && num(at[0].substr(2), &dim) && num(nm[0], &n) && num(nm[1], &m) && n >= 1 && m > n;
}

}  // namespace

absl::Status Parser::ParseWordFrom(std::string_view what, size_t* pos, std::string_view* out) {
  *pos = lex_.SkipSpace();
  *out = lex_.ConsumeName();
  if (out->empty()) return lex_.Error(absl::StrCat("expected ", std::string(what)));
  return absl::OkStatus();
}

absl::Status Parser::ParseCheckedAttribute(std::string_view key, size_t key_pos, PendingInstr* p, bool* handled) {
  Opcode op = p->instr->opcode();
  *handled = true;
  size_t value_pos = lex_.SkipSpace();
  if (op == Opcode::kCustomCall && (key == "api_version" || key == "custom_call_schedule" || key == "schedule")) {
    size_t pos;
    std::string_view w;
    HLOX_RETURN_IF_ERROR(ParseWordFrom(key, &pos, &w));
    bool known = key == "api_version" ? OneOf(kApiVersions, w) : OneOf(kSchedules, w);
    if (!known) return lex_.ErrorAt(pos, absl::StrCat("unknown ", std::string(key), " '", std::string(w), "'"));
  } else if ((op == Opcode::kDot || op == Opcode::kConvolution) && key == "algorithm") {
    size_t pos;
    std::string_view w;
    HLOX_RETURN_IF_ERROR(ParseWordFrom(key, &pos, &w));
    if (!OneOf(kDotAlgorithms, w)) {
      return lex_.ErrorAt(pos, absl::StrCat("unknown ", std::string(OpcodeName(op)), " algorithm '", std::string(w),
                                            "' (e.g. dot_bf16_bf16_f32, dot_f32_f32_f32)"));
    }
  } else if (op == Opcode::kCustomCall && key == "operand_layout_constraints") {
    HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open operand_layout_constraints"));
    p->layout_constraints_pos = key_pos;
    p->layout_constraints.emplace();
    while (!lex_.TryConsume('}')) {
      if (!p->layout_constraints->empty()) HLOX_RETURN_IF_ERROR(lex_.Expect(',', "between operand layouts"));
      p->layout_constraints->emplace_back();
      HLOX_RETURN_IF_ERROR(ParseShape(&p->layout_constraints->back()));
    }
  } else if (op == Opcode::kDot && key == "sparsity") {
    size_t end = value_pos;
    std::string_view t = lex_.text();
    while (end < t.size() && (IsNameChar(t[end]) || t[end] == '@' || t[end] == ':')) ++end;
    std::string_view value = t.substr(value_pos, end - value_pos);
    std::vector<std::string> items = absl::StrSplit(std::string(value), '_');
    for (const std::string& item : items) {
      if (!ValidSparsity(item)) {
        return lex_.ErrorAt(value_pos,
                            absl::StrCat("invalid sparsity descriptor '", std::string(value),
                                         "': expected L.dim@n:m or R.dim@n:m (n >= 1, m > n), joined by '_'"));
      }
    }
    lex_.set_pos(end);
  } else if (key == "operand_precision" && (op == Opcode::kDot || op == Opcode::kConvolution ||
                                            op == Opcode::kRaggedDot || op == Opcode::kScaledDot)) {
    HLOX_RETURN_IF_ERROR(ParsePrecisionList(p->instr->opcode()));
  } else if (key == "output_to_operand_aliasing") {
    HLOX_RETURN_IF_ERROR(ParseOutputOperandAliasing(p));
  } else if (key == "metadata") {
    HLOX_RETURN_IF_ERROR(ParseMetadataValue());
  } else if (key == "sharding") {
    HLOX_RETURN_IF_ERROR(ParseShardingValue(p->infer_shape ? nullptr : &p->instr->shape()));
  } else if (key == "parameter_replication" && op == Opcode::kParameter) {
    HLOX_RETURN_IF_ERROR(ParseBoolListOrBool());
  } else if (key == "constrain_layout") {
    bool ignored;
    HLOX_RETURN_IF_ERROR(ParseBool(&ignored));
  } else if (key == "result_accuracy") {
    if (!TakesResultAccuracy(op)) {
      return lex_.ErrorAt(
          key_pos, absl::StrCat("result_accuracy is only for transcendental ops, not ", std::string(OpcodeName(op))));
    }
    HLOX_RETURN_IF_ERROR(ParseResultAccuracy());
  } else {
    *handled = false;
    return absl::OkStatus();
  }
  std::string_view raw = lex_.text().substr(value_pos, lex_.pos() - value_pos);
  p->instr->raw_attributes().push_back({std::string(key), std::string(raw)});
  return absl::OkStatus();
}

// metadata ::= '{' (','? field '=' value)* '}' | '{' metadata (',' metadata)* '}'. Field types
// follow XLA's OpMetadata; an unknown or repeated field is an error.
absl::Status Parser::ParseMetadataValue(bool allow_list) {
  HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open metadata"));
  if (lex_.Peek() == '{') {  // a list of metadata, one level deep
    if (!allow_list) return lex_.Error("expected a metadata field, not a nested list");
    while (true) {
      HLOX_RETURN_IF_ERROR(ParseMetadataValue(false));
      if (lex_.TryConsume('}')) return absl::OkStatus();
      HLOX_RETURN_IF_ERROR(lex_.Expect(',', "between metadata"));
    }
  }
  static constexpr std::array<std::string_view, 5> kStrings = {"op_type", "op_name", "source_file", "deduplicated_name",
                                                               "scheduling_name"};
  static constexpr std::array<std::string_view, 5> kInts = {"source_line", "source_end_line", "source_column",
                                                            "source_end_column", "stack_frame_id"};
  std::vector<std::string_view> seen;
  std::string scratch;  // string values are checked, not kept
  while (!lex_.TryConsume('}')) {
    lex_.TryConsume(',');
    size_t pos;
    std::string_view field;
    HLOX_RETURN_IF_ERROR(ParseWordFrom("a metadata field", &pos, &field));
    for (std::string_view s : seen) {
      if (s == field) return lex_.ErrorAt(pos, absl::StrCat("metadata field '", std::string(s), "' given twice"));
    }
    seen.emplace_back(field);
    HLOX_RETURN_IF_ERROR(lex_.Expect('=', "after a metadata field"));
    if (OneOf(kStrings, field)) {
      if (lex_.Peek() != '"') return lex_.Error(absl::StrCat("expected a quoted string for ", std::string(field)));
      HLOX_RETURN_IF_ERROR(lex_.ConsumeString(&scratch));
    } else if (OneOf(kInts, field)) {
      int64_t ignored;
      HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&ignored, field));
    } else if (field == "profile_type") {
      std::vector<int64_t> ignored;
      HLOX_RETURN_IF_ERROR(ParseIntList(&ignored));
    } else if (field == "preserve_layout") {
      bool ignored;
      HLOX_RETURN_IF_ERROR(ParseBool(&ignored));
    } else {
      return lex_.ErrorAt(pos, absl::StrCat("unknown metadata field '", std::string(field), "'"));
    }
  }
  return absl::OkStatus();
}

// operand_precision={p, p}: one of XLA's precisions per operand (two for dot and convolution).
absl::Status Parser::ParsePrecisionList(Opcode op) {
  size_t open_pos = lex_.SkipSpace();
  HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open operand_precision"));
  int count = 0;
  while (!lex_.TryConsume('}')) {
    if (count > 0) HLOX_RETURN_IF_ERROR(lex_.Expect(',', "between precisions"));
    size_t pos;
    std::string_view w;
    HLOX_RETURN_IF_ERROR(ParseWordFrom("a precision", &pos, &w));
    std::string lower = absl::AsciiStrToLower(std::string(w));
    if (lower != "default" && lower != "high" && lower != "highest" && lower != "packed_nibble") {
      return lex_.ErrorAt(pos, absl::StrCat("unknown precision '", std::string(w),
                                            "': expected default, high, highest or packed_nibble"));
    }
    ++count;
  }
  if (count != 2) {
    return lex_.ErrorAt(open_pos,
                        absl::StrCat(std::string(OpcodeName(op)), " takes 2 operand precisions, got ", count));
  }
  return absl::OkStatus();
}

// output_to_operand_aliasing={ {out}: (operand, {index}), ... }; indices are checked against
// the shapes once they are all known.
absl::Status Parser::ParseOutputOperandAliasing(PendingInstr* p) {
  HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open output_to_operand_aliasing"));
  while (!lex_.TryConsume('}')) {
    if (!p->operand_aliases.empty()) HLOX_RETURN_IF_ERROR(lex_.Expect(',', "between aliases"));
    OperandAlias a;
    a.pos = lex_.SkipSpace();
    HLOX_RETURN_IF_ERROR(ParseShapeIndex(&a.output_index));
    HLOX_RETURN_IF_ERROR(lex_.Expect(':', "after the output shape index"));
    HLOX_RETURN_IF_ERROR(lex_.Expect('(', "before the operand number"));
    HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&a.operand, "operand number"));
    HLOX_RETURN_IF_ERROR(lex_.Expect(',', "after the operand number"));
    HLOX_RETURN_IF_ERROR(ParseShapeIndex(&a.operand_index));
    HLOX_RETURN_IF_ERROR(lex_.Expect(')', "to close the alias"));
    p->operand_aliases.push_back(std::move(a));
  }
  return absl::OkStatus();
}

// A bool, or a braced list of bools ({true,false}).
absl::Status Parser::ParseBoolListOrBool() {
  bool ignored;
  if (!lex_.TryConsume('{')) return ParseBool(&ignored);
  while (!lex_.TryConsume('}')) {
    HLOX_RETURN_IF_ERROR(ParseBool(&ignored));
    if (lex_.Peek() != '}') HLOX_RETURN_IF_ERROR(lex_.Expect(',', "or '}' in a list of bools"));
  }
  return absl::OkStatus();
}

// result_accuracy ::= '{' 'mode=' (default|highest) '}' | '{' 'tolerance={' (atol|rtol|ulps)=number, ... '}' '}'
absl::Status Parser::ParseResultAccuracy() {
  HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open result_accuracy"));
  size_t pos;
  std::string_view field;
  HLOX_RETURN_IF_ERROR(ParseWordFrom("mode or tolerance", &pos, &field));
  HLOX_RETURN_IF_ERROR(lex_.Expect('=', "in result_accuracy"));
  if (field == "mode") {
    std::string_view mode;
    HLOX_RETURN_IF_ERROR(ParseWordFrom("a result accuracy mode", &pos, &mode));
    std::string lower = absl::AsciiStrToLower(std::string(mode));
    if (lower != "default" && lower != "highest") {
      return lex_.ErrorAt(
          pos, absl::StrCat("unknown result accuracy mode '", std::string(mode), "': expected default or highest"));
    }
  } else if (field == "tolerance") {
    HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open the tolerance"));
    while (!lex_.TryConsume('}')) {
      std::string_view name;
      HLOX_RETURN_IF_ERROR(ParseWordFrom("atol, rtol or ulps", &pos, &name));
      if (name != "atol" && name != "rtol" && name != "ulps") {
        return lex_.ErrorAt(
            pos, absl::StrCat("unknown tolerance field '", std::string(name), "': expected atol, rtol or ulps"));
      }
      HLOX_RETURN_IF_ERROR(lex_.Expect('=', "after a tolerance field"));
      float v;
      HLOX_RETURN_IF_ERROR(ParseFloat(&v));
      if (lex_.Peek() != '}') HLOX_RETURN_IF_ERROR(lex_.Expect(',', "between tolerance fields"));
    }
  } else {
    return lex_.ErrorAt(
        pos, absl::StrCat("unknown result_accuracy field '", std::string(field), "': expected mode or tolerance"));
  }
  return lex_.Expect('}', "to close result_accuracy");
}

}  // namespace hlox::parser_internal
