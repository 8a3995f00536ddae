// Stored reference quiet times: JSON file I/O and the once-per-process load.
#include "cost/host_reference_store.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "cost/calibrate.h"
#include "nlohmann/json.hpp"

namespace hlox {

std::string ReferenceQuietPath() {
  if (const char* env = std::getenv("HLOX_REFERENCE_QUIET"); env && *env) return env;
  std::filesystem::path calib(CalibrationPath());
  return (calib.parent_path() / "host_reference.json").string();
}

absl::Status SaveReferenceQuiet(const ReferenceQuiet& quiet, const std::string& path) {
  if (!(quiet.compute > 0 && quiet.memory > 0)) {
    return absl::InvalidArgumentError("reference quiet times must be positive");
  }
  const nlohmann::json j{{"compute_seconds", quiet.compute}, {"memory_seconds", quiet.memory}};
  return WriteFileAtomically(path, j.dump(2) + "\n");
}

absl::StatusOr<ReferenceQuiet> LoadReferenceQuiet(const std::string& path) {
  absl::StatusOr<nlohmann::json> read = ReadJsonObjectFile(path, "reference");
  if (!read.ok()) return read.status();
  const nlohmann::json& j = *read;
  ReferenceQuiet q;
  auto c = j.find("compute_seconds"), m = j.find("memory_seconds");
  if (c == j.end() || m == j.end() || !c->is_number() || !m->is_number()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": compute_seconds and memory_seconds "
                                                   "must be numbers"));
  }
  q.compute = c->get<double>();
  q.memory = m->get<double>();
  if (!(q.compute > 0 && q.memory > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": quiet times must be positive"));
  }
  return q;
}

void UseStoredReferenceQuiet() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (FixedReferenceQuiet()) return;
    absl::StatusOr<ReferenceQuiet> q = LoadReferenceQuiet(ReferenceQuietPath());
    if (q.ok()) SetReferenceQuiet(*q);
  });
}

}  // namespace hlox
