// Roles of the CURVE keys the broker admits, read from the allow folder: ALLOW/worker/*.pub may
// serve jobs, ALLOW/agent/*.pub may submit, read status and cancel its own campaigns,
// ALLOW/admin/*.pub may do everything. Keys directly in ALLOW/*.pub (the layout before roles)
// are worker+agent. A key in several folders has the union. The table is rebuilt on every
// reload (SIGHUP) and swapped in whole, so a failed reload keeps the old one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"

namespace hlox::broker {

// Role bits; a key holds any union of them. Admin implies every power (it is what a peer of a
// broker without CURVE is).
enum Role : uint8_t {
  kRoleNone = 0,
  kRoleWorker = 1,  // READY, HEARTBEAT, DONE, NEED_MODULE
  kRoleAgent = 2,   // SUBMIT, control status, cancel of its own campaigns
  kRoleAdmin = 4,   // everything, including drain, shutdown and cancel of any campaign
};
inline constexpr uint8_t kRoleAll = kRoleWorker | kRoleAgent | kRoleAdmin;

// True when `roles` allows what `needed` names (admin allows everything).
inline bool HasRole(uint8_t roles, Role needed) {
  return (roles & (needed | kRoleAdmin)) != 0;
}
// "worker+agent", "admin", "none": for logs and error messages.
std::string RoleNames(uint8_t roles);

class KeyRoles {
 public:
  // Reads `dir` (flat *.pub = worker+agent, and the worker/, agent/, admin/ subfolders, each
  // optional) and adds `self_public_z85` (the broker's own key) as admin. An error for an
  // unreadable folder or a malformed key file: the caller keeps its old table.
  static absl::StatusOr<KeyRoles> Load(const std::string& dir, const std::string& self_public_z85);

  // The roles of the key whose Z85 text is `z85` (as the ZAP handler's User-Id); none when unknown.
  uint8_t Lookup(std::string_view z85) const {
    auto it = roles_.find(z85);
    return it == roles_.end() ? uint8_t(kRoleNone) : it->second;
  }
  // 32-byte binary public keys of every admitted key (for the ZAP handler), sorted.
  std::vector<std::string> BinaryKeys() const;
  // Keys holding each role (the broker's own key included among the admins).
  int Count(Role r) const;
  // Keys found directly in the folder (the layout before roles).
  int legacy() const { return legacy_; }
  size_t size() const { return roles_.size(); }
  // "worker 3, agent 2, admin 1".
  std::string Summary() const;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, uint8_t, Hash, std::equal_to<>> roles_;  // Z85 key -> roles
  int legacy_ = 0;
};

}  // namespace hlox::broker
