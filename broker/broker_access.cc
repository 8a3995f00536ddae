// Who may do what: each message's key (the ZAP handler's User-Id) is looked up in the current
// role table (key_roles.h) as the message is handled, so a key removed by a reload loses its
// powers at once, even on a connection that is already open. Campaign ownership for SUBMIT and
// cancel, the SIGHUP reload of the allow folder, and the refusal counters.
#include <zmq.h>

#include "absl/strings/str_cat.h"
#include "broker/broker.h"
#include "common/logging.h"

namespace hlox::broker {

void Broker::IdentifyPeer(const proto::Received& in) {
  if (!zap_) {  // no CURVE: every peer is trusted, as before roles
    peer_key_ = {};
    peer_roles_ = kRoleAll;
    return;
  }
  const char* uid = in.frames.empty()
      ? nullptr
      : zmq_msg_gets(const_cast<zmq::message_t&>(in.frames[0]).handle(), "User-Id");
  peer_key_ = uid ? std::string_view(uid) : std::string_view();
  peer_roles_ = roles_.Lookup(peer_key_);
}

void Broker::CountForbidden(const std::string& op, const char* reason) {
  ++stats_.forbidden[op][reason];
}

bool Broker::Permit(Role needed, const std::string& identity, const char* op,
                    std::string_view submit_body) {
  if (HasRole(peer_roles_, needed)) return true;
  const bool unknown = peer_roles_ == kRoleNone;
  CountForbidden(op, unknown ? "unknown_key" : "role");
  const std::string why =
      unknown ? absl::StrCat(op, " refused: this key is no longer on the allow-list")
              : absl::StrCat(op, " needs the ", RoleNames(needed), " role; this key is ",
                             RoleNames(peer_roles_));
  log::broker().debug("forbidden: {}", why);
  SendError(identity, submit_body.empty() ? std::string_view() : proto::PeekJobId(submit_body),
            proto::kErrForbidden, why);
  // A registered worker whose key lost the worker role gives its leases back now.
  if (!HasRole(peer_roles_, kRoleWorker) && workers_.Find(identity)) {
    LoseWorker(identity, "its key lost the worker role");
  }
  return false;
}

std::string Broker::ControlRefusal(const std::string& op, const std::string& target,
                                   std::string* reason) const {
  *reason = "role";
  if (peer_roles_ & kRoleAdmin) return "";
  if (peer_roles_ == kRoleNone) {
    *reason = "unknown_key";
    return "this key is no longer on the allow-list";
  }
  if (op == "drain" || op == "shutdown") {
    return absl::StrCat(op, " needs the admin role; this key is ", RoleNames(peer_roles_));
  }
  if (!(peer_roles_ & kRoleAgent)) {
    return absl::StrCat(op, " needs the agent or admin role; this key is ", RoleNames(peer_roles_));
  }
  if (op == "cancel") {
    const std::string* owner = owners_->Find(target);
    if (owner == nullptr || *owner != peer_key_) {
      *reason = "owner";
      return absl::StrCat("campaign '", target, "' ",
                          owner ? "belongs to another key" : "has no owner yet",
                          " (agents cancel only their own campaigns)");
    }
  }
  return "";
}

bool Broker::CheckCampaignOwner(const std::string& agent, const proto::SubmitMsg& m) {
  if (peer_key_.empty() || m.campaign.empty()) return true;  // no CURVE, or no campaign
  const std::string* owner = owners_->Find(m.campaign);
  if (owner == nullptr) {
    if (absl::Status st = owners_->Claim(m.campaign, peer_key_); !st.ok()) {
      log::broker().error("storing the owner of campaign '{}': {}", m.campaign,
                          std::string(st.message()));
    }
    return true;
  }
  if (*owner == peer_key_ || (peer_roles_ & kRoleAdmin)) return true;
  CountForbidden("submit", "owner");
  SendError(agent, m.job_id, proto::kErrForbidden,
            absl::StrCat("campaign '", m.campaign, "' belongs to another key; use another "
                         "campaign name"));
  return false;
}

absl::Status Broker::ReloadAllowList() {
  if (!zap_) {
    return absl::FailedPreconditionError("no allow-list to reload (the broker runs without CURVE)");
  }
  absl::StatusOr<KeyRoles> fresh = KeyRoles::Load(opts_.allow_dir, self_keys_.server_key);
  if (!fresh.ok()) return fresh.status();
  const std::string before = roles_.Summary();
  roles_ = std::move(*fresh);
  zap_->SetAllowed(roles_.BinaryKeys());
  log::broker().info("allow-list reloaded from {}: {} (was {})", opts_.allow_dir,
                     roles_.Summary(), before);
  if (roles_.legacy() > 0) {
    log::broker().info("{} keys directly in {} are worker+agent (not admin)", roles_.legacy(),
                       opts_.allow_dir);
  }
  return absl::OkStatus();
}

}  // namespace hlox::broker
