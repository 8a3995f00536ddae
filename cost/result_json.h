// JSON form of the result record (nlohmann_json), the format of `hlox eval --json`, result
// exports and the service's stored results. docs/RESULTS.md describes every key. ToJson and
// FromJson round-trip every field.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "cost/result.h"
#include "nlohmann/json.hpp"

namespace hlox {

nlohmann::json ToJson(const CostDistribution& cost);
nlohmann::json ToJson(const AnalyticalCost& analytical);
nlohmann::json ToJson(const Provenance& provenance);
nlohmann::json ToJson(const ResultRecord& record);
// `samples` may be left out of the cost object (include_samples=false) to keep exports small.
std::string ResultToJsonString(const ResultRecord& record, bool include_samples = true,
                               int indent = -1);

// Parses a record; missing keys keep their defaults, wrong types or an unknown status are
// InvalidArgument.
absl::StatusOr<ResultRecord> ResultFromJson(const nlohmann::json& j);
absl::StatusOr<ResultRecord> ResultFromJsonString(const std::string& text);

}  // namespace hlox
