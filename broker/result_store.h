// The broker's durable store: finished job results and module texts in SQLite (WAL,
// synchronous=FULL). The broker commits a batch of results before it acknowledges any of them
// to an agent, so a restarted broker on the same file keeps every acknowledged result. A commit
// that fails (a full disk) stores nothing of its batch; the broker holds the batch and retries.
// An empty path gives a memory-only store (nothing survives a restart).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct sqlite3;
struct sqlite3_stmt;

namespace hlox::broker {

struct StoredResult {
  std::string job_id, campaign, cache_key, status;
  std::string record;  // msgpack ResultRecord
  uint32_t attempts = 0;
};

class ResultStore {
 public:
  // Opens (creating if needed) the database at `path`; "" = no database.
  static absl::StatusOr<std::unique_ptr<ResultStore>> Open(const std::string& path);
  ~ResultStore();
  ResultStore(const ResultStore&) = delete;
  ResultStore& operator=(const ResultStore&) = delete;

  bool durable() const { return db_ != nullptr; }
  // Caps the database at `bytes` (whole pages, at least its present size; 0 = no cap beyond
  // SQLite's own): a commit that would grow it further fails as on a full disk
  // (ResourceExhausted). No-op for a memory-only store.
  absl::Status SetMaxBytes(uint64_t bytes);
  // Writes `results` in one transaction and returns after it is on disk. On failure nothing of
  // the batch is stored (the transaction is rolled back) and the store stays usable:
  // ResourceExhausted when its disk is full (SQLITE_FULL, ENOSPC), Internal otherwise.
  absl::Status CommitResults(const std::vector<StoredResult>& results);
  absl::Status PutModule(const std::string& hash, const std::string& text);
  // The stored record of `job_id` (NotFound when absent or memory-only).
  absl::StatusOr<std::string> ReadRecord(const std::string& job_id);
  // Calls `fn` for every stored result / module (used once at startup).
  absl::Status ForEachResult(const std::function<void(StoredResult&&)>& fn);
  absl::Status ForEachModule(const std::function<void(std::string&&, std::string&&)>& fn);

 private:
  ResultStore() = default;
  absl::Status Exec(const char* sql);
  void RollBackIfOpen();
  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_result_ = nullptr;
  sqlite3_stmt* insert_module_ = nullptr;
  sqlite3_stmt* select_record_ = nullptr;
};

}  // namespace hlox::broker
