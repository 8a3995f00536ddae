// ResultCache without sockets, on a memory-only and on a SQLite ResultStore: finished jobs and
// their counts, cache hits, coalescing keys, the resident-bytes budget that drops the oldest
// committed records, and reading dropped records back from the store (also after a reload).
#include "broker/result_cache.h"

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace hlox::broker {
namespace {

class TempDb {
 public:
  TempDb() {
    path_ = (std::filesystem::temp_directory_path() /
             ("hlox_result_cache_test_" + std::to_string(::getpid()) + "_" +
              std::to_string(counter_++) + ".db")).string();
  }
  ~TempDb() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + suffix);
  }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

DoneJob Done(const std::string& record, const std::string& campaign = "c",
             const std::string& status = "OK") {
  return DoneJob{record, campaign, status, 1, false};
}

TEST(ResultCache, FinishedJobsAndCounts) {
  auto store = ResultStore::Open("");
  ASSERT_TRUE(store.ok());
  ResultCache c(store->get(), 1 << 20);
  c.AddDone("a", Done("ra", "c1", "OK"));
  c.AddDone("b", Done("rb", "c1", "TIMEOUT"));
  c.AddDone("a", Done("other", "c2", "OK"));  // already finished: ignored
  EXPECT_EQ(c.done_count(), 2u);
  EXPECT_EQ(c.done_by_campaign().at("c1"), 2);
  EXPECT_EQ(c.done_by_status().at("OK"), 1);
  EXPECT_EQ(*c.RecordOf("a"), "ra");
  EXPECT_EQ(c.RecordOf("zz").status().code(), absl::StatusCode::kNotFound);
  c.Forget("b");
  EXPECT_EQ(c.FindDone("b"), nullptr);
  EXPECT_EQ(c.done_by_status().count("TIMEOUT"), 0u);
  EXPECT_EQ(c.done_by_campaign().at("c1"), 1);
}

TEST(ResultCache, LookupAnswersFromTheFinishedJob) {
  auto store = ResultStore::Open("");
  ASSERT_TRUE(store.ok());
  ResultCache c(store->get(), 1 << 20);
  EXPECT_FALSE(c.Lookup("k").has_value());
  c.Remember("k", "a");
  EXPECT_FALSE(c.Lookup("k").has_value());  // "a" has not finished
  c.AddDone("a", Done("ra", "c", "WRONG_OUTPUT"));
  auto hit = c.Lookup("k");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->record, "ra");
  EXPECT_EQ(hit->status, JobStatus::kWrongOutput);
  c.AddDone("bad", Done("r", "c", "NOT_A_STATUS"));
  c.Remember("k2", "bad");
  EXPECT_FALSE(c.Lookup("k2").has_value());
}

TEST(ResultCache, InFlightKeysBelongToTheirJob) {
  auto store = ResultStore::Open("");
  ASSERT_TRUE(store.ok());
  ResultCache c(store->get(), 1 << 20);
  EXPECT_EQ(c.InFlight("k"), nullptr);
  EXPECT_TRUE(c.SetInFlight("k", "a", /*replace=*/false));
  EXPECT_FALSE(c.SetInFlight("k", "b", /*replace=*/false));
  EXPECT_EQ(*c.InFlight("k"), "a");
  c.EndInFlight("k", "b");  // not b's: kept
  EXPECT_EQ(*c.InFlight("k"), "a");
  EXPECT_TRUE(c.SetInFlight("k", "b", /*replace=*/true));
  EXPECT_EQ(*c.InFlight("k"), "b");
  c.EndInFlight("k", "b");
  EXPECT_EQ(c.InFlight("k"), nullptr);
}

TEST(ResultCache, OldestCommittedRecordsAreDroppedAndReadBack) {
  TempDb db;
  auto store = ResultStore::Open(db.path());
  ASSERT_TRUE(store.ok());
  ResultStore& s = **store;
  ResultCache c(&s, 25);  // room for two 10-byte records
  for (const char* id : {"a", "b", "c"}) {
    const std::string record = std::string(9, id[0]) + "!";
    const size_t before = c.resident_bytes();
    c.AddDone(id, Done(record));
    EXPECT_EQ(c.resident_bytes(), before);  // uncommitted records do not count yet
    ASSERT_TRUE(s.CommitResults({{id, "c", std::string("key-") + id, "OK", record, 1}}).ok());
    c.MarkCommitted(id);
    c.Remember(std::string("key-") + id, id);
  }
  EXPECT_EQ(c.resident_bytes(), 20u);
  ASSERT_NE(c.FindDone("a"), nullptr);
  EXPECT_TRUE(c.FindDone("a")->in_store_only);
  EXPECT_TRUE(c.FindDone("a")->record.empty());
  EXPECT_FALSE(c.FindDone("c")->in_store_only);
  EXPECT_EQ(c.store_reads(), 0);
  EXPECT_EQ(*c.RecordOf("a"), "aaaaaaaaa!");
  EXPECT_EQ(c.store_reads(), 1);
  auto hit = c.Lookup("key-a");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->record, "aaaaaaaaa!");
  EXPECT_EQ(c.store_reads(), 2);
  EXPECT_EQ(*c.RecordOf("c"), "ccccccccc!");  // resident: no read
  EXPECT_EQ(c.store_reads(), 2);
  c.MarkCommitted("c");  // twice: counted once
  EXPECT_EQ(c.resident_bytes(), 20u);

  // A restarted broker reloads every row, cached under its key, within the same budget.
  ResultCache again(&s, 25);
  ASSERT_TRUE(again.Reload().ok());
  EXPECT_EQ(again.done_count(), 3u);
  EXPECT_EQ(again.resident_bytes(), 20u);
  EXPECT_EQ(again.done_by_status().at("OK"), 3);
  auto reloaded = again.Lookup("key-b");
  ASSERT_TRUE(reloaded.has_value());
  EXPECT_EQ(reloaded->record, "bbbbbbbbb!");
}

TEST(ResultCache, MemoryOnlyStoreCannotReadBack) {
  auto store = ResultStore::Open("");
  ASSERT_TRUE(store.ok());
  ResultCache c(store->get(), 5);
  c.AddDone("a", Done("0123456789"));
  c.MarkCommitted("a");  // over budget: dropped, but the memory-only store has no copy
  EXPECT_TRUE(c.FindDone("a")->in_store_only);
  EXPECT_FALSE(c.RecordOf("a").ok());
  EXPECT_FALSE(c.Lookup("none").has_value());
}

}  // namespace
}  // namespace hlox::broker
