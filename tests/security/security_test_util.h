// Helpers shared by the security tests: running a shell command, temporary folders, `hlox keygen`
// key pairs and the status JSON over the control channel with given keys.
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "client/client.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "protocol/curve.h"
#include "tests/test_util.h"

namespace hlox::testing {

// Runs a shell command line; returns its exit status and stdout (+stderr unless dropped).
inline int RunCapture(const std::string& cmd, std::string* out, bool drop_stderr = false) {
  out->clear();
  FILE* p = ::popen((cmd + (drop_stderr ? " 2>/dev/null" : " 2>&1")).c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out->append(buf, n);
  int st = ::pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// A fresh folder under the temporary directory ("" on failure).
inline std::filesystem::path TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "hlox-sec-XXXXXX").string();
  char* d = ::mkdtemp(tmpl.data());
  return d ? std::filesystem::path(d) : std::filesystem::path();
}

// `hlox keygen` into dir (name.key, name.pub); returns the public key text.
inline std::string Keygen(const std::filesystem::path& dir, const std::string& name) {
  std::string out;
  int rc = RunCapture(HloxBinary() + " keygen --out " + dir.string() + " --name " + name, &out);
  EXPECT_EQ(rc, 0) << out;
  std::ifstream in(dir / (name + ".pub"));
  std::string pub;
  in >> pub;
  return pub;
}

// The broker's status over `control` with `keys` (any address the broker serves CONTROL on).
inline absl::StatusOr<nlohmann::json> Status(const std::string& control,
                                             const proto::CurveClientKeys& keys,
                                             std::chrono::milliseconds timeout =
                                                 std::chrono::milliseconds(1000)) {
  auto s = client::ControlRequest(control, "status", "", timeout, keys);
  if (!s.ok()) return s.status();
  return nlohmann::json::parse(*s);
}

inline std::set<std::string> WorkerIds(const nlohmann::json& status) {
  std::set<std::string> ids;
  for (const auto& w : status["workers"]) ids.insert(w["id"].get<std::string>());
  return ids;
}

}  // namespace hlox::testing
