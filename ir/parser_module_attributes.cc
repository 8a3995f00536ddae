// Module header attributes: every `key=value` after the module name is kept as text for the
// printer; input_output_alias and buffer_donor are also read into typed entries and, once the
// entry computation is known, checked as XLA's HloInputOutputAliasConfig / HloBufferDonorConfig
// and its verifier check them (indices that exist, array buffers of equal size, no buffer used
// twice). hlox is stricter in one way: a repeated entry is an error, where XLA keeps the first.
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "ir/parser_internal.h"

namespace hlox::parser_internal {
namespace {

std::string IndexText(const std::vector<int64_t>& index) { return absl::StrCat("{", absl::StrJoin(index, ","), "}"); }

}  // namespace

absl::Status Parser::ParseModuleAttribute(Module* module) {
  size_t key_pos = lex_.SkipSpace();
  std::string_view key = lex_.ConsumeName();
  if (key.empty()) return lex_.Error("expected a module attribute name");
  for (const RawAttribute& a : module->header_attributes()) {
    if (a.key == key) return lex_.ErrorAt(key_pos, absl::StrCat("module attribute '", a.key, "' given twice"));
  }
  HLOX_RETURN_IF_ERROR(lex_.Expect('=', "after a module attribute name"));
  size_t value_pos = lex_.SkipSpace();
  std::string_view value;
  if (key == "input_output_alias" || key == "buffer_donor") {
    HLOX_RETURN_IF_ERROR(key == "buffer_donor" ? ParseDonors(module) : ParseAliases(module));
    value = lex_.text().substr(value_pos, lex_.pos() - value_pos);
  } else {
    HLOX_RETURN_IF_ERROR(lex_.ConsumeRawValue(&value));
  }
  module->header_attributes().push_back({std::string(key), std::string(value)});
  return absl::OkStatus();
}

absl::Status Parser::ParseShapeIndex(std::vector<int64_t>* out) {
  out->clear();
  HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open a shape index"));
  if (lex_.TryConsume('}')) return absl::OkStatus();
  while (true) {
    int64_t v;
    size_t pos = lex_.SkipSpace();
    HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&v, "shape index element"));
    if (v < 0) return lex_.ErrorAt(pos, "negative shape index element");
    out->push_back(v);
    if (lex_.TryConsume('}')) return absl::OkStatus();
    HLOX_RETURN_IF_ERROR(lex_.Expect(',', "or '}' in a shape index"));
  }
}

absl::Status Parser::ParseParameterNumber(int64_t* out) {
  size_t pos = lex_.SkipSpace();
  HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(out, "parameter number"));
  if (*out < 0) return lex_.ErrorAt(pos, "negative parameter number");
  return absl::OkStatus();
}

// input_output_alias ::= '{' (shape_index ':' '(' int ',' shape_index (',' kind)? ')')* '}'
absl::Status Parser::ParseAliases(Module* module) {
  HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open input_output_alias"));
  while (!lex_.TryConsume('}')) {
    if (!module->input_output_aliases().empty()) HLOX_RETURN_IF_ERROR(lex_.Expect(',', "between aliases"));
    InputOutputAlias a;
    alias_pos_.push_back(lex_.SkipSpace());
    HLOX_RETURN_IF_ERROR(ParseShapeIndex(&a.output_index));
    HLOX_RETURN_IF_ERROR(lex_.Expect(':', "after the output shape index"));
    HLOX_RETURN_IF_ERROR(lex_.Expect('(', "before the aliased parameter"));
    HLOX_RETURN_IF_ERROR(ParseParameterNumber(&a.parameter_number));
    HLOX_RETURN_IF_ERROR(lex_.Expect(',', "after the parameter number"));
    HLOX_RETURN_IF_ERROR(ParseShapeIndex(&a.parameter_index));
    if (lex_.TryConsume(',')) {
      size_t kind_pos = lex_.SkipSpace();
      std::string_view kind = lex_.ConsumeName();
      if (kind != "may-alias" && kind != "must-alias") {
        return lex_.ErrorAt(
            kind_pos, absl::StrCat("unknown alias kind '", std::string(kind), "': expected may-alias or must-alias"));
      }
      a.must_alias = kind == "must-alias";
    }
    HLOX_RETURN_IF_ERROR(lex_.Expect(')', "to close the alias"));
    module->input_output_aliases().push_back(std::move(a));
  }
  return absl::OkStatus();
}

// buffer_donor ::= '{' ('(' int ',' shape_index ')')* '}'
absl::Status Parser::ParseDonors(Module* module) {
  HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open buffer_donor"));
  while (!lex_.TryConsume('}')) {
    if (!module->buffer_donors().empty()) HLOX_RETURN_IF_ERROR(lex_.Expect(',', "between buffer donors"));
    BufferDonor d;
    donor_pos_.push_back(lex_.SkipSpace());
    HLOX_RETURN_IF_ERROR(lex_.Expect('(', "to open a buffer donor"));
    HLOX_RETURN_IF_ERROR(ParseParameterNumber(&d.parameter_number));
    HLOX_RETURN_IF_ERROR(lex_.Expect(',', "after the parameter number"));
    HLOX_RETURN_IF_ERROR(ParseShapeIndex(&d.parameter_index));
    HLOX_RETURN_IF_ERROR(lex_.Expect(')', "to close the buffer donor"));
    module->buffer_donors().push_back(std::move(d));
  }
  return absl::OkStatus();
}

absl::Status Parser::CheckAliasing(const Module& module) {
  const Computation& entry = *module.entry();
  // The parameter buffer (number, index) at `pos`, or an error naming what does not exist.
  auto param_buffer = [&](size_t pos, int64_t number,
                          const std::vector<int64_t>& index) -> absl::StatusOr<const Shape*> {
    if (number >= entry.parameter_count()) {
      return lex_.ErrorAt(pos, absl::StrCat("parameter ", number, " does not exist: the entry has ",
                                            entry.parameter_count(), " parameters"));
    }
    const Shape* s = SubshapeAt(entry.parameter(number)->shape(), index);
    if (s == nullptr)
      return lex_.ErrorAt(pos, absl::StrCat("parameter ", number, " has no shape index ", IndexText(index)));
    if (!s->IsArray())
      return lex_.ErrorAt(pos, absl::StrCat("parameter ", number, " at ", IndexText(index), " is not an array"));
    return s;
  };
  std::set<std::vector<int64_t>> outputs;
  std::set<std::pair<int64_t, std::vector<int64_t>>> aliased;
  for (size_t i = 0; i < module.input_output_aliases().size(); ++i) {
    const InputOutputAlias& a = module.input_output_aliases()[i];
    size_t pos = alias_pos_[i];
    const Shape* out = SubshapeAt(entry.ResultShape(), a.output_index);
    if (out == nullptr)
      return lex_.ErrorAt(pos, absl::StrCat("the entry's result has no shape index ", IndexText(a.output_index)));
    if (!outputs.insert(a.output_index).second)
      return lex_.ErrorAt(pos, absl::StrCat("output ", IndexText(a.output_index), " is aliased twice"));
    absl::StatusOr<const Shape*> in = param_buffer(pos, a.parameter_number, a.parameter_index);
    if (!in.ok()) return in.status();
    if (!out->IsArray() || out->ByteSize() != (*in)->ByteSize()) {
      return lex_.ErrorAt(pos, absl::StrCat("output ", IndexText(a.output_index), " (", out->ToString(),
                                            ") and parameter ", a.parameter_number, " at ",
                                            IndexText(a.parameter_index), " (", (*in)->ToString(), ") differ in size"));
    }
    if (!aliased.insert({a.parameter_number, a.parameter_index}).second) {
      return lex_.ErrorAt(pos, absl::StrCat("parameter ", a.parameter_number, " at ", IndexText(a.parameter_index),
                                            " is aliased to more than one output"));
    }
  }
  std::set<std::pair<int64_t, std::vector<int64_t>>> donors;
  for (size_t i = 0; i < module.buffer_donors().size(); ++i) {
    const BufferDonor& d = module.buffer_donors()[i];
    absl::StatusOr<const Shape*> in = param_buffer(donor_pos_[i], d.parameter_number, d.parameter_index);
    if (!in.ok()) return in.status();
    std::pair<int64_t, std::vector<int64_t>> key{d.parameter_number, d.parameter_index};
    if (!donors.insert(key).second) return lex_.ErrorAt(donor_pos_[i], "buffer donor listed twice");
    if (aliased.count(key)) {
      return lex_.ErrorAt(donor_pos_[i],
                          absl::StrCat("parameter ", d.parameter_number, " at ", IndexText(d.parameter_index),
                                       " is both a buffer donor and aliased to an output"));
    }
  }
  return absl::OkStatus();
}

}  // namespace hlox::parser_internal
