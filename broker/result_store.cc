// SQLite-backed durable result store; see result_store.h.
#include "broker/result_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/str_cat.h"

namespace hlox::broker {
namespace {

// Whether the last error on `db` means its disk is full: SQLITE_FULL, or an I/O error whose
// system call failed with ENOSPC (or EDQUOT, a full quota).
bool DiskFull(sqlite3* db) {
  if (!db) return false;
  const int code = sqlite3_extended_errcode(db);
  if ((code & 0xff) == SQLITE_FULL) return true;
  const int sys = sqlite3_system_errno(db);
  return (code & 0xff) == SQLITE_IOERR && (sys == ENOSPC || sys == EDQUOT);
}

// ResourceExhausted when the disk is full (DiskFull), else Internal; the message names the call.
absl::Status SqlError(sqlite3* db, const char* what) {
  std::string msg = absl::StrCat("sqlite ", what, ": ", db ? sqlite3_errmsg(db) : "?");
  if (DiskFull(db)) return absl::ResourceExhaustedError(msg);
  return absl::InternalError(msg);
}

std::string Column(sqlite3_stmt* st, int i) {
  const void* p = sqlite3_column_blob(st, i);
  int n = sqlite3_column_bytes(st, i);
  return p ? std::string(static_cast<const char*>(p), n) : std::string();
}

void Bind(sqlite3_stmt* st, int i, const std::string& s) {
  sqlite3_bind_blob(st, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ResultStore>> ResultStore::Open(const std::string& path) {
  std::unique_ptr<ResultStore> s(new ResultStore());
  if (path.empty()) return s;
  if (sqlite3_open(path.c_str(), &s->db_) != SQLITE_OK) {
    absl::Status st = SqlError(s->db_, "open");
    sqlite3_close(s->db_);
    s->db_ = nullptr;
    return st;
  }
  sqlite3_busy_timeout(s->db_, 2000);
  for (const char* sql :
       {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL",
        "CREATE TABLE IF NOT EXISTS results (job_id BLOB PRIMARY KEY, campaign BLOB, "
        "cache_key BLOB, status BLOB, attempts INTEGER, record BLOB)",
        "CREATE TABLE IF NOT EXISTS modules (hash BLOB PRIMARY KEY, text BLOB)"}) {
    if (absl::Status st = s->Exec(sql); !st.ok()) return st;
  }
  if (sqlite3_prepare_v2(s->db_,
                         "INSERT OR IGNORE INTO results (job_id, campaign, cache_key, status, "
                         "attempts, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                         -1, &s->insert_result_, nullptr) != SQLITE_OK ||
      sqlite3_prepare_v2(s->db_, "INSERT OR IGNORE INTO modules (hash, text) VALUES (?1, ?2)", -1,
                         &s->insert_module_, nullptr) != SQLITE_OK ||
      sqlite3_prepare_v2(s->db_, "SELECT record FROM results WHERE job_id = ?1", -1,
                         &s->select_record_, nullptr) != SQLITE_OK) {
    return SqlError(s->db_, "prepare");
  }
  return s;
}

ResultStore::~ResultStore() {
  sqlite3_finalize(insert_result_);
  sqlite3_finalize(insert_module_);
  sqlite3_finalize(select_record_);
  if (db_) sqlite3_close(db_);
}

absl::Status ResultStore::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = absl::StrCat("sqlite: ", sql, ": ", err ? err : "?");
    sqlite3_free(err);
    if (DiskFull(db_)) return absl::ResourceExhaustedError(msg);
    return absl::InternalError(msg);
  }
  return absl::OkStatus();
}

void ResultStore::RollBackIfOpen() {
  // SQLite may already have rolled back (it does for some SQLITE_FULL/IOERR cases); a
  // transaction left open would make every later BEGIN fail.
  if (!sqlite3_get_autocommit(db_)) Exec("ROLLBACK").IgnoreError();
}

absl::Status ResultStore::SetMaxBytes(uint64_t bytes) {
  if (!db_) return absl::OkStatus();
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "PRAGMA page_size", -1, &st, nullptr) != SQLITE_OK) {
    return SqlError(db_, "page_size");
  }
  const int64_t page = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 4096;
  sqlite3_finalize(st);
  // SQLite's own ceiling when uncapped (the largest page count it accepts).
  const uint64_t pages = bytes == 0 ? 4294967294u : std::max<uint64_t>(1, bytes / uint64_t(page));
  const std::string sql = absl::StrCat("PRAGMA max_page_count = ", pages);
  return Exec(sql.c_str());
}

absl::Status ResultStore::CommitResults(const std::vector<StoredResult>& results) {
  if (!db_ || results.empty()) return absl::OkStatus();
  if (absl::Status st = Exec("BEGIN IMMEDIATE"); !st.ok()) return st;
  for (const StoredResult& r : results) {
    sqlite3_reset(insert_result_);
    Bind(insert_result_, 1, r.job_id);
    Bind(insert_result_, 2, r.campaign);
    Bind(insert_result_, 3, r.cache_key);
    Bind(insert_result_, 4, r.status);
    sqlite3_bind_int64(insert_result_, 5, r.attempts);
    Bind(insert_result_, 6, r.record);
    if (sqlite3_step(insert_result_) != SQLITE_DONE) {
      absl::Status st = SqlError(db_, "insert result");
      sqlite3_reset(insert_result_);
      RollBackIfOpen();
      return st;
    }
  }
  sqlite3_reset(insert_result_);
  absl::Status st = Exec("COMMIT");
  if (!st.ok()) RollBackIfOpen();
  return st;
}

absl::Status ResultStore::PutModule(const std::string& hash, const std::string& text) {
  if (!db_) return absl::OkStatus();
  sqlite3_reset(insert_module_);
  Bind(insert_module_, 1, hash);
  Bind(insert_module_, 2, text);
  absl::Status st = absl::OkStatus();
  if (sqlite3_step(insert_module_) != SQLITE_DONE) st = SqlError(db_, "insert module");
  sqlite3_reset(insert_module_);  // ends the statement's implicit transaction either way
  return st;
}

absl::Status ResultStore::ForEachResult(const std::function<void(StoredResult&&)>& fn) {
  if (!db_) return absl::OkStatus();
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_,
                         "SELECT job_id, campaign, cache_key, status, attempts, record FROM results",
                         -1, &st, nullptr) != SQLITE_OK) {
    return SqlError(db_, "select results");
  }
  while (sqlite3_step(st) == SQLITE_ROW) {
    StoredResult r;
    r.job_id = Column(st, 0);
    r.campaign = Column(st, 1);
    r.cache_key = Column(st, 2);
    r.status = Column(st, 3);
    r.attempts = static_cast<uint32_t>(sqlite3_column_int64(st, 4));
    r.record = Column(st, 5);
    fn(std::move(r));
  }
  sqlite3_finalize(st);
  return absl::OkStatus();
}

absl::StatusOr<std::string> ResultStore::ReadRecord(const std::string& job_id) {
  if (!db_) return absl::NotFoundError("memory-only store");
  sqlite3_reset(select_record_);
  Bind(select_record_, 1, job_id);
  int rc = sqlite3_step(select_record_);
  if (rc == SQLITE_DONE) return absl::NotFoundError("no stored result for job " + job_id);
  if (rc != SQLITE_ROW) return SqlError(db_, "select record");
  std::string record = Column(select_record_, 0);
  sqlite3_reset(select_record_);
  return record;
}

absl::Status ResultStore::ForEachModule(
    const std::function<void(std::string&&, std::string&&)>& fn) {
  if (!db_) return absl::OkStatus();
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT hash, text FROM modules", -1, &st, nullptr) != SQLITE_OK) {
    return SqlError(db_, "select modules");
  }
  while (sqlite3_step(st) == SQLITE_ROW) fn(Column(st, 0), Column(st, 1));
  sqlite3_finalize(st);
  return absl::OkStatus();
}

}  // namespace hlox::broker
