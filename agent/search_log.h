// Search logs: every (configuration, cost) pair of a search as JSON lines, with a header line
// naming the module file, pipeline and decision point, so train-advantage can rebuild the
// graph. Format: {"module":PATH,"pipeline":P,"key":K,"sites":N,"objective":O} then one
// {"d":[...],"cost":C,"status":"OK"} per evaluation (cost null when invalid).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/search.h"

namespace hlox {

struct SearchLog {
  std::string module_path, pipeline, key, objective;
  int64_t sites = 0;
  std::vector<LogEntry> entries;
};

absl::Status WriteSearchLog(const std::string& path, const SearchLog& log);
absl::StatusOr<SearchLog> ReadSearchLog(const std::string& path);

}  // namespace hlox
