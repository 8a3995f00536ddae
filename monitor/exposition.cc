// Prometheus text format writer; see exposition.h.
#include "monitor/exposition.h"

#include <cassert>
#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace hlox::monitor {

std::string EscapeLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

std::string FormatDouble(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // Shortest round-trip digits; plain decimals where they are short ("0.0005", not the "5e-04"
  // to_chars picks by length), so bucket bounds read as client libraries spell them.
  const double a = std::fabs(v);
  const auto format = a == 0 || (a >= 1e-4 && a < 1e15) ? std::chars_format::fixed : std::chars_format::scientific;
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, format);
  if (ec != std::errc()) return "NaN";  // cannot happen: at most 17 digits and a short exponent
  return std::string(buf, end);
}

std::string FormatValue(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return absl::StrCat(v.get<uint64_t>());
  if (v.is_number_integer()) return absl::StrCat(v.get<int64_t>());
  if (v.is_number_float()) return FormatDouble(v.get<double>());
  return "0";
}

void Exposition::Family(const std::string& name, const std::string& type, const std::string& help) {
  [[maybe_unused]] const bool fresh = families_.insert(name).second;
  assert(fresh && "a metric family is written once");
  absl::StrAppend(&out_, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

void Exposition::Sample(const std::string& name, const Labels& labels, const nlohmann::json& value) {
  absl::StrAppend(&out_, name);
  if (!labels.empty()) {
    out_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      absl::StrAppend(&out_, i ? "," : "", labels[i].first, "=\"", EscapeLabelValue(labels[i].second), "\"");
    }
    out_ += '}';
  }
  absl::StrAppend(&out_, " ", FormatValue(value), "\n");
}

void Exposition::Histogram(const std::string& name, const Labels& labels, const nlohmann::json& hist,
                           const std::vector<double>& bounds) {
  const bool valid = hist.is_object() && hist.contains("le") && hist["le"].is_array() &&
                     hist.contains("counts") && hist["counts"].is_array() &&
                     hist["counts"].size() == hist["le"].size() + 1;
  const nlohmann::json le = valid ? hist["le"] : nlohmann::json(bounds);
  const std::string bucket = absl::StrCat(name, "_bucket");
  for (size_t i = 0; i <= le.size(); ++i) {
    Labels with_le = labels;
    with_le.emplace_back("le", i < le.size() && le[i].is_number() ? FormatDouble(le[i].get<double>()) : "+Inf");
    Sample(bucket, with_le, valid ? hist["counts"][i] : nlohmann::json(0));
  }
  Sample(absl::StrCat(name, "_sum"), labels, valid ? hist.value("sum", nlohmann::json(0.0)) : nlohmann::json(0.0));
  Sample(absl::StrCat(name, "_count"), labels, valid ? hist.value("count", nlohmann::json(0)) : nlohmann::json(0));
}

}  // namespace hlox::monitor
