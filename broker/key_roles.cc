// Loading the role table from the allow folder; see key_roles.h.
#include "broker/key_roles.h"

#include <zmq.h>

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "protocol/curve.h"

namespace hlox::broker {
namespace {

std::string Z85Of(const std::string& key32) {
  char out[41] = {};
  zmq_z85_encode(out, reinterpret_cast<const uint8_t*>(key32.data()), 32);
  return out;
}

}  // namespace

std::string RoleNames(uint8_t roles) {
  if (roles & kRoleAdmin) return "admin";
  std::string s;
  if (roles & kRoleWorker) s = "worker";
  if (roles & kRoleAgent) s += s.empty() ? "agent" : "+agent";
  return s.empty() ? "none" : s;
}

absl::StatusOr<KeyRoles> KeyRoles::Load(const std::string& dir, const std::string& self_public_z85) {
  namespace fs = std::filesystem;
  KeyRoles t;
  // The flat folder must exist and be readable (LoadAllowList says so); subfolders are optional.
  absl::StatusOr<std::vector<std::string>> flat = proto::LoadAllowList(dir);
  if (!flat.ok()) return flat.status();
  for (const std::string& k : *flat) t.roles_[Z85Of(k)] |= kRoleWorker | kRoleAgent;
  t.legacy_ = static_cast<int>(flat->size());
  const std::pair<const char*, Role> kFolders[] = {
      {"worker", kRoleWorker}, {"agent", kRoleAgent}, {"admin", kRoleAdmin}};
  for (const auto& [name, role] : kFolders) {
    const fs::path sub = fs::path(dir) / name;
    std::error_code ec;
    if (!fs::exists(sub, ec)) continue;
    if (!fs::is_directory(sub, ec)) {
      return absl::InvalidArgumentError(absl::StrCat(sub.string(), " is not a folder"));
    }
    absl::StatusOr<std::vector<std::string>> keys = proto::LoadAllowList(sub.string());
    if (!keys.ok()) return keys.status();
    for (const std::string& k : *keys) t.roles_[Z85Of(k)] |= role;
  }
  if (!self_public_z85.empty()) t.roles_[self_public_z85] |= kRoleAdmin;
  return t;
}

std::vector<std::string> KeyRoles::BinaryKeys() const {
  std::vector<std::string> keys;
  keys.reserve(roles_.size());
  for (const auto& [z85, roles] : roles_) {
    if (absl::StatusOr<std::string> k = proto::DecodeZ85Key(z85); k.ok()) keys.push_back(*k);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

int KeyRoles::Count(Role r) const {
  return static_cast<int>(std::count_if(roles_.begin(), roles_.end(),
                                        [r](const auto& kv) { return (kv.second & r) != 0; }));
}

std::string KeyRoles::Summary() const {
  return absl::StrCat("worker ", Count(kRoleWorker), ", agent ", Count(kRoleAgent), ", admin ",
                      Count(kRoleAdmin));
}

}  // namespace hlox::broker
