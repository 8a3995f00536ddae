// Text of statistics={...} and origin={...} in XLA's form, from their typed forms
// (ir/attributes.h); the inverse of parser_value_attributes.cc.
#include <charconv>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/printer_internal.h"

namespace hlox::printer_internal {
namespace {

// The shortest text that reads back as the same double (XLA prints six digits, which loses
// precision; this one round-trips and XLA reads it too).
std::string DoubleText(double v) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  (void)ec;
  return std::string(buf, p);
}

// XLA's form: {} without statistics (the index is dropped then, as XLA does), otherwise
// {visualizing_index=N,name=value,...}.
std::string StatisticsText(const StatisticsViz& s) {
  if (s.statistics.empty()) return "{}";
  std::string out = absl::StrCat("{visualizing_index=", s.visualizing_index);
  for (const Statistic& stat : s.statistics) absl::StrAppend(&out, ",", stat.name, "=", DoubleText(stat.value));
  return out + "}";
}

// A tuple as (e0, e1, ...), an array leaf as {"name"} or {"name" {i,j}}, an empty leaf as {}.
void AppendOriginalValueNode(const OriginalValue& v, std::string* out) {
  if (v.is_tuple) {
    *out += "(";
    for (size_t i = 0; i < v.elements.size(); ++i) {
      if (i) *out += ", ";
      AppendOriginalValueNode(v.elements[i], out);
    }
    *out += ")";
    return;
  }
  if (!v.leaf) {
    *out += "{}";
    return;
  }
  absl::StrAppend(out, "{\"", CEscape(v.leaf->instruction_name), "\"");
  if (!v.leaf->shape_index.empty()) absl::StrAppend(out, " {", absl::StrJoin(v.leaf->shape_index, ","), "}");
  *out += "}";
}

}  // namespace

void AppendValueAttributes(const Instruction& instr, std::string* out) {
  const Attributes& a = instr.attrs();
  if (a.statistics) absl::StrAppend(out, ", statistics=", StatisticsText(*a.statistics));
  if (a.original_value) {
    *out += ", origin={";
    if (a.original_value->synthetic_call) {
      *out += "[synthetic_call]";
    } else {
      AppendOriginalValueNode(*a.original_value, out);
    }
    *out += "}";
  }
}

}  // namespace hlox::printer_internal
