// JSON-lines search logs.
#include "agent/search_log.h"

#include <cmath>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace hlox {

absl::Status WriteSearchLog(const std::string& path, const SearchLog& log) {
  std::ofstream out(path);
  if (!out) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
  nlohmann::json head = {{"module", log.module_path}, {"pipeline", log.pipeline}, {"key", log.key},
                         {"sites", log.sites}, {"objective", log.objective}};
  out << head.dump() << "\n";
  for (const LogEntry& e : log.entries) {
    nlohmann::json j = {{"d", e.decisions}, {"status", std::string(JobStatusName(e.status))}};
    j["cost"] = std::isfinite(e.cost) ? nlohmann::json(e.cost) : nlohmann::json(nullptr);
    out << j.dump() << "\n";
  }
  return out ? absl::OkStatus() : absl::InternalError(absl::StrCat("write failed: ", path));
}

absl::StatusOr<SearchLog> ReadSearchLog(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  SearchLog log;
  std::string line;
  int64_t n = 0;
  try {
    if (!std::getline(in, line)) return absl::InvalidArgumentError(absl::StrCat(path, ": empty log"));
    nlohmann::json head = nlohmann::json::parse(line);
    log.module_path = head.at("module").get<std::string>();
    log.pipeline = head.at("pipeline").get<std::string>();
    log.key = head.at("key").get<std::string>();
    log.sites = head.at("sites").get<int64_t>();
    log.objective = head.value("objective", "measured");
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      nlohmann::json j = nlohmann::json::parse(line);
      LogEntry e;
      e.decisions = j.at("d").get<DecisionVector>();
      e.cost = j.at("cost").is_null() ? INFINITY : j.at("cost").get<double>();
      e.status = ParseJobStatus(j.at("status").get<std::string>()).value_or(JobStatus::kRunError);
      e.evaluation = ++n;
      if (static_cast<int64_t>(e.decisions.size()) != log.sites) {
        return absl::InvalidArgumentError(absl::StrCat(path, ":", n + 1, ": decision vector has ",
                                                       e.decisions.size(), " entries, header says ", log.sites));
      }
      log.entries.push_back(std::move(e));
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ":", n + 1, ": ", e.what()));
  }
  return log;
}

}  // namespace hlox
