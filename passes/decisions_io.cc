// JSON and compact decision files.
#include "passes/decisions_io.h"

#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace hlox {
namespace {

absl::Status CheckKey(const std::string& key) {
  size_t hash = key.rfind('#');
  int k = 0;
  if (hash == std::string::npos || hash == 0 ||
      !absl::SimpleAtoi(absl::string_view(key).substr(hash + 1), &k) || k < 0) {
    return InvalidDecisionsError(absl::StrCat("invocation key '", key, "' is not of the form <pass>#<k>"));
  }
  return absl::OkStatus();
}

absl::StatusOr<DecisionsFile> ParseJson(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidDecisionsError("decisions file is not valid JSON");
  if (!j.is_object()) return InvalidDecisionsError("decisions JSON must be an object");
  DecisionsFile out;
  if (j.contains("pipeline")) {
    if (!j["pipeline"].is_string()) return InvalidDecisionsError("\"pipeline\" must be a string");
    out.pipeline = j["pipeline"].get<std::string>();
  }
  if (!j.contains("decisions")) return out;
  const nlohmann::json& d = j["decisions"];
  if (!d.is_object()) return InvalidDecisionsError("\"decisions\" must be an object of key -> [choices]");
  for (auto it = d.begin(); it != d.end(); ++it) {
    if (absl::Status s = CheckKey(it.key()); !s.ok()) return s;
    if (!it.value().is_array()) return InvalidDecisionsError(absl::StrCat("decisions for '", it.key(), "' must be an array"));
    DecisionVector v;
    for (size_t i = 0; i < it.value().size(); ++i) {
      const nlohmann::json& c = it.value()[i];
      if (!c.is_number_integer() || c.get<int64_t>() < INT32_MIN || c.get<int64_t>() > INT32_MAX) {
        return InvalidDecisionsError(absl::StrCat("decision ", i, " of '", it.key(), "' is not an integer"));
      }
      v.push_back(static_cast<int32_t>(c.get<int64_t>()));
    }
    out.decisions[it.key()] = std::move(v);
  }
  return out;
}

absl::StatusOr<DecisionsFile> ParseCompact(std::string_view text) {
  DecisionsFile out;
  std::string t(text);
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  std::vector<std::string> parts = absl::StrSplit(t, ';');
  for (size_t p = 0; p < parts.size(); ++p) {
    const std::string& part = parts[p];
    size_t eq = part.find('=');
    if (eq == std::string::npos) {
      if (p == 0) {
        out.pipeline = part;
        continue;
      }
      if (part.empty()) continue;
      return InvalidDecisionsError(absl::StrCat("compact decisions: '", part, "' has no '='"));
    }
    std::string key = part.substr(0, eq);
    if (absl::Status s = CheckKey(key); !s.ok()) return s;
    DecisionVector v;
    std::string list = part.substr(eq + 1);
    if (!list.empty()) {
      for (absl::string_view c : absl::StrSplit(list, ',')) {
        int32_t x = 0;
        if (!absl::SimpleAtoi(c, &x)) {
          return InvalidDecisionsError(absl::StrCat("decision '", std::string(c), "' of '", key, "' is not an integer"));
        }
        v.push_back(x);
      }
    }
    out.decisions[key] = std::move(v);
  }
  return out;
}

}  // namespace

absl::StatusOr<DecisionsFile> ParseDecisions(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') return ParseJson(text);
  return ParseCompact(first == std::string_view::npos ? std::string_view() : text.substr(first));
}

std::string EffectivePipeline(const std::string& flag, const DecisionsFile& file) {
  if (!flag.empty()) return flag;
  return file.pipeline.empty() ? "default" : file.pipeline;
}

absl::StatusOr<DecisionsFile> ReadDecisionsFile(const std::string& path) {
  if (path.empty()) return DecisionsFile{};
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read decisions file ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseDecisions(ss.str());
}

std::string DecisionsToJson(const DecisionsFile& file) {
  nlohmann::json j;
  j["pipeline"] = file.pipeline;
  nlohmann::json d = nlohmann::json::object();
  for (const auto& [k, v] : file.decisions) d[k] = v;
  j["decisions"] = d;
  return j.dump();
}

std::string DecisionsToCompact(const DecisionsFile& file) {
  std::string out = file.pipeline;
  for (const auto& [k, v] : file.decisions) absl::StrAppend(&out, ";", k, "=", absl::StrJoin(v, ","));
  return out;
}

}  // namespace hlox
