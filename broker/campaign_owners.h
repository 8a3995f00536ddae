// Who owns each campaign: the key (Z85 text) that first submitted a job in it. With a database
// the owners live in its campaign_owners table (their own connection to the store's file), so
// they survive a broker restart; without one they are kept in memory only.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/status/statusor.h"

struct sqlite3;

namespace hlox::broker {

class CampaignOwners {
 public:
  // Opens the table in the SQLite file `db_path` ("" = memory only) and loads every owner.
  static absl::StatusOr<std::unique_ptr<CampaignOwners>> Open(const std::string& db_path);
  ~CampaignOwners();
  CampaignOwners(const CampaignOwners&) = delete;
  CampaignOwners& operator=(const CampaignOwners&) = delete;

  // The owner of `campaign`, or null when it has none yet.
  const std::string* Find(const std::string& campaign) const {
    auto it = owners_.find(campaign);
    return it == owners_.end() ? nullptr : &it->second;
  }
  // Records `owner` for a campaign that has none (written to the database before it returns);
  // an error when the write fails (the owner is still kept in memory).
  absl::Status Claim(const std::string& campaign, std::string_view owner);
  size_t size() const { return owners_.size(); }

 private:
  CampaignOwners() = default;
  sqlite3* db_ = nullptr;
  std::unordered_map<std::string, std::string> owners_;
};

}  // namespace hlox::broker
