// A writer for the Prometheus text exposition format (version 0.0.4): metric families with their
// HELP and TYPE lines, samples with escaped labels, and histograms from the broker's cumulative
// bucket JSON. Integers print as integers (a counter past 2^53, or past %g's six digits, keeps
// every digit) and floating-point values in the shortest form that reads back to the same double.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"

namespace hlox::monitor {

using Labels = std::vector<std::pair<std::string, std::string>>;

// A label value with backslash, double quote and newline escaped as the format requires.
std::string EscapeLabelValue(std::string_view v);
// `v` as the format spells it: the shortest digits that read back to `v` (plain decimal for
// 1e-4 <= |v| < 1e15, else with an exponent), "+Inf", "-Inf" or "NaN".
std::string FormatDouble(double v);
// A JSON number as a sample value: integers exactly, floats by FormatDouble; anything else
// (missing, null, text) as 0.
std::string FormatValue(const nlohmann::json& v);

class Exposition {
 public:
  // Starts family `name` of `type` (counter, gauge, histogram). Each name is started once.
  void Family(const std::string& name, const std::string& type, const std::string& help);
  // One sample line `name{labels} value`; `value` as FormatValue reads it.
  void Sample(const std::string& name, const Labels& labels, const nlohmann::json& value);
  // The _bucket, _sum and _count lines of histogram `name` from a JSON histogram
  // {"le": [bounds], "counts": [cumulative..., +Inf], "sum", "count"} (broker/job_metrics.h);
  // a missing or malformed one is written as an empty histogram over `bounds`.
  void Histogram(const std::string& name, const Labels& labels, const nlohmann::json& hist,
                 const std::vector<double>& bounds);
  // The text so far.
  const std::string& text() const { return out_; }

 private:
  std::string out_;
  std::set<std::string> families_;
};

}  // namespace hlox::monitor
