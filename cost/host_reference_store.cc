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
  std::error_code ec;
  std::filesystem::path fp(path);
  if (fp.has_parent_path()) std::filesystem::create_directories(fp.parent_path(), ec);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    nlohmann::json j{{"compute_seconds", quiet.compute}, {"memory_seconds", quiet.memory}};
    out << j.dump(2) << "\n";
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", tmp));
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot rename to ", path, ": ", ec.message()));
  return absl::OkStatus();
}

absl::StatusOr<ReferenceQuiet> LoadReferenceQuiet(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("no reference file ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a JSON object"));
  }
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
