// The result store when it cannot grow (a size cap standing in for a full disk): a failed
// commit stores nothing of its batch, says ResourceExhausted, leaves the store usable and the
// file sound, and the same batch commits once there is room.
#include "broker/result_store.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace hlox::broker {
namespace {

std::string TempDb() {
  char path[] = "/tmp/hlox-store-XXXXXX";
  int fd = ::mkstemp(path);
  ::close(fd);
  ::unlink(path);
  return std::string(path) + ".db";
}

std::vector<StoredResult> Batch(const std::string& prefix, int n) {
  std::vector<StoredResult> b;
  for (int i = 0; i < n; ++i) {
    // Distinct bytes per record, so nothing compresses into fewer pages.
    std::string record(3000, '\0');
    for (size_t k = 0; k < record.size(); ++k) record[k] = char((k * 131 + i * 7) & 0xff);
    b.push_back({prefix + std::to_string(i), "c", "key-" + prefix + std::to_string(i), "OK",
                 record, 1});
  }
  return b;
}

std::string IntegrityCheck(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) return "open failed";
  sqlite3_stmt* st = nullptr;
  std::string out = "prepare failed";
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

TEST(ResultStore, AFullStoreRefusesAWholeBatchAndTakesItLater) {
  const std::string path = TempDb();
  {
    auto store = ResultStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->CommitResults(Batch("a", 4)).ok());
    ASSERT_TRUE((*store)->SetMaxBytes(96 << 10).ok());
    // Batches of 8 records (~24 KB) until one no longer fits.
    int committed = 0;
    absl::Status full = absl::OkStatus();
    std::vector<StoredResult> refused;
    for (int round = 0; round < 16; ++round) {
      std::vector<StoredResult> b = Batch(absl::StrCat("r", round, "-"), 8);
      full = (*store)->CommitResults(b);
      if (!full.ok()) {
        refused = std::move(b);
        break;
      }
      ++committed;
    }
    ASSERT_FALSE(full.ok()) << "a 96 KiB cap took 16 batches of 24 KB";
    EXPECT_TRUE(absl::IsResourceExhausted(full)) << full;
    // Nothing of the refused batch is stored; everything before it is.
    for (const StoredResult& r : refused) {
      EXPECT_TRUE(absl::IsNotFound((*store)->ReadRecord(r.job_id).status())) << r.job_id;
    }
    EXPECT_TRUE((*store)->ReadRecord("a0").ok());
    // A second try fails the same way (the failed transaction left nothing open).
    EXPECT_TRUE(absl::IsResourceExhausted((*store)->CommitResults(refused)));
    // Room again: the same batch commits, and every row is there.
    ASSERT_TRUE((*store)->SetMaxBytes(0).ok());
    ASSERT_TRUE((*store)->CommitResults(refused).ok());
    int rows = 0;
    ASSERT_TRUE((*store)->ForEachResult([&](StoredResult&&) { ++rows; }).ok());
    EXPECT_EQ(rows, 4 + 8 * committed + 8);
    auto back = (*store)->ReadRecord(refused.back().job_id);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, refused.back().record);
  }
  EXPECT_EQ(IntegrityCheck(path), "ok");
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
}

TEST(ResultStore, AMemoryOnlyStoreHasNoCap) {
  auto store = ResultStore::Open("");
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE((*store)->SetMaxBytes(1).ok());
  EXPECT_TRUE((*store)->CommitResults(Batch("m", 2)).ok());
}

}  // namespace
}  // namespace hlox::broker
