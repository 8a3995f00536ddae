// RFC 4180 fields and round-trip numbers (csv.h).
#include "common/csv.h"

#include <charconv>
#include <cmath>

namespace hlox {

std::string CsvField(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string CsvNumber(double v) {
  if (!std::isfinite(v)) return "";  // no value: an empty field, as spreadsheets and pandas read it
  char buf[64];
  // std::to_chars without a format or precision writes the shortest round-trip form.
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string CsvRow(const std::vector<std::string>& fields) {
  std::string row;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) row += ',';
    row += fields[i];
  }
  return row + "\r\n";
}

}  // namespace hlox
