// The campaign_owners table; see campaign_owners.h.
#include "broker/campaign_owners.h"

#include <sqlite3.h>

#include "absl/strings/str_cat.h"

namespace hlox::broker {
namespace {

absl::Status SqlError(sqlite3* db, const char* what) {
  return absl::InternalError(absl::StrCat("sqlite ", what, " (campaign owners): ",
                                          db ? sqlite3_errmsg(db) : "?"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<CampaignOwners>> CampaignOwners::Open(const std::string& db_path) {
  std::unique_ptr<CampaignOwners> o(new CampaignOwners());
  if (db_path.empty()) return o;
  if (sqlite3_open(db_path.c_str(), &o->db_) != SQLITE_OK) return SqlError(o->db_, "open");
  sqlite3_busy_timeout(o->db_, 2000);
  if (sqlite3_exec(o->db_,
                   "CREATE TABLE IF NOT EXISTS campaign_owners (campaign BLOB PRIMARY KEY, "
                   "owner BLOB)",
                   nullptr, nullptr, nullptr) != SQLITE_OK) {
    return SqlError(o->db_, "create");
  }
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(o->db_, "SELECT campaign, owner FROM campaign_owners", -1, &st,
                         nullptr) != SQLITE_OK) {
    return SqlError(o->db_, "prepare");
  }
  auto column = [st](int i) {
    const void* p = sqlite3_column_blob(st, i);
    return p ? std::string(static_cast<const char*>(p), sqlite3_column_bytes(st, i)) : std::string();
  };
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) o->owners_.emplace(column(0), column(1));
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return SqlError(o->db_, "read");
  return o;
}

CampaignOwners::~CampaignOwners() {
  if (db_) sqlite3_close(db_);
}

absl::Status CampaignOwners::Claim(const std::string& campaign, std::string_view owner) {
  owners_.emplace(campaign, std::string(owner));
  if (!db_) return absl::OkStatus();
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "INSERT OR IGNORE INTO campaign_owners (campaign, owner) VALUES (?1, ?2)",
                         -1, &st, nullptr) != SQLITE_OK) {
    return SqlError(db_, "prepare");
  }
  sqlite3_bind_blob(st, 1, campaign.data(), static_cast<int>(campaign.size()), SQLITE_TRANSIENT);
  sqlite3_bind_blob(st, 2, owner.data(), static_cast<int>(owner.size()), SQLITE_TRANSIENT);
  const int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? absl::OkStatus() : SqlError(db_, "insert");
}

}  // namespace hlox::broker
