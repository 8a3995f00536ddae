// CSV as RFC 4180 writes it: fields separated by commas, a field holding a comma, a double quote,
// CR or LF enclosed in double quotes with its quotes doubled, rows ended by CRLF; numbers in the
// shortest form that reads back to the same double.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hlox {

// `field` quoted when it must be, as above.
std::string CsvField(std::string_view field);
// The shortest decimal text that parses back to exactly `v`; an empty field for NaN or infinity.
std::string CsvNumber(double v);
// The fields (already formatted with CsvField/CsvNumber or plain) joined by commas, with CRLF.
std::string CsvRow(const std::vector<std::string>& fields);

}  // namespace hlox
