// A result store that cannot grow, without root: a broker whose --db is capped (--db-max-mb, the
// same code path as a full disk) fills up under a real worker and client. Status must say
// store_full with results held, nothing unstored may be acknowledged, and after a restart on the
// same file without the cap the client's resubmissions finish every job exactly once, every
// result is stored and the file passes PRAGMA integrity_check. (tests/service/store_full_test.sh
// does the same with a real full filesystem, as root.)
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <thread>

#include "client/client.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "protocol/protocol.h"
#include "tests/service/service_test_util.h"

namespace hlox::testing {
namespace {

using namespace std::chrono_literals;

// Job ids stored in `db` and the integrity_check verdict ("ok" when sound).
std::pair<std::set<std::string>, std::string> ReadStore(const std::string& db) {
  std::set<std::string> ids;
  std::string verdict = "unreadable";
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, "SELECT job_id FROM results", -1, &st, nullptr) == SQLITE_OK) {
      while (sqlite3_step(st) == SQLITE_ROW) {
        ids.emplace(static_cast<const char*>(sqlite3_column_blob(st, 0)), sqlite3_column_bytes(st, 0));
      }
    }
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      verdict = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return {ids, verdict};
}

std::optional<nlohmann::json> Status(const std::string& control) {
  auto st = client::ControlRequest(control, "status");
  if (!st.ok()) return std::nullopt;
  return nlohmann::json::parse(*st, nullptr, false);
}

TEST(StoreCap, AFullStoreHoldsResultsAndLosesNothingAcknowledged) {
  const std::string dir = std::filesystem::temp_directory_path() / ("hlox-cap-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string db = dir + "/broker.db";
  const std::string addr = TcpAddress(FreePortPair());
  const std::string control = proto::ControlAddressFor(addr);
  auto broker = StartBroker(addr, db, {"--db-max-mb", "1"});
  auto worker = StartWorker(addr, "cap-w", {"--test-mode", "echo", "--credit", "8"});
  ASSERT_TRUE(WaitForWorkers(control, 1, 10s));
  auto client = client::Client::Connect(addr);
  ASSERT_TRUE(client.ok());
  auto text = std::make_shared<const std::string>(AddModule("cap"));
  // More echo records than 1 MiB holds (each is several hundred bytes).
  int n = 0;
  auto submit = [&](int count) {
    for (int i = 0; i < count; ++i, ++n) {
      client::JobSpec j;
      j.id = absl::StrCat("cap", n);
      j.campaign = "cap";
      j.module_text = text;
      j.use_cache = false;
      ASSERT_TRUE((*client)->Submit(std::move(j)).ok());
    }
  };
  submit(6000);
  bool full = false;
  nlohmann::json s;
  for (int i = 0; i < 300 && !full; ++i) {
    std::this_thread::sleep_for(100ms);
    auto got = Status(control);
    if (got && !got->is_discarded()) {
      s = *got;
      full = s["broker"]["store_full"].get<bool>();
    }
  }
  ASSERT_TRUE(full) << "the capped store never filled: " << s["broker"].dump();
  EXPECT_NE(s["broker"]["store_error"].get<std::string>(), "");
  // Jobs keep finishing into the held batch, and submissions are refused meanwhile (the first
  // 6000 may all have arrived before the store filled: these come after).
  submit(20);
  for (int i = 0; i < 100; ++i) {
    auto got = Status(control);
    ASSERT_TRUE(got.has_value()) << "status stopped answering while the store is full";
    s = *got;
    if (s["broker"]["uncommitted_results"].get<int64_t>() > 0 &&
        s["broker"]["store_full_refusals"].get<int64_t>() > 0) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_GT(s["broker"]["uncommitted_results"].get<int64_t>(), 0) << s["broker"].dump();
  EXPECT_GT(s["broker"]["store_full_refusals"].get<int64_t>(), 0) << s["broker"].dump();
  // Whatever the client has been given so far is stored.
  int dups = 0;
  auto before = Collect(**client, n, 1s, &dups);
  ASSERT_LT(before.size(), size_t(n));
  broker->Kill(SIGTERM);
  ASSERT_NE(broker->Wait(10s), -1);
  auto [stored_before, verdict_before] = ReadStore(db);
  EXPECT_EQ(verdict_before, "ok");
  for (const auto& [id, r] : before) EXPECT_TRUE(stored_before.count(id)) << id << " acknowledged, not stored";
  // Room again (no cap): the client resubmits what it still waits for.
  broker = StartBroker(addr, db);
  auto rest = Collect(**client, n - before.size(), 120s, &dups);
  for (auto& [id, r] : rest) {
    EXPECT_FALSE(before.count(id)) << id << " delivered twice";
    before[id] = r;
  }
  EXPECT_EQ(before.size(), size_t(n));
  EXPECT_EQ(dups, 0);
  auto after = Status(control);
  ASSERT_TRUE(after.has_value());
  EXPECT_FALSE((*after)["broker"]["store_full"].get<bool>());
  broker->Kill(SIGTERM);
  ASSERT_NE(broker->Wait(10s), -1);
  auto [stored, verdict] = ReadStore(db);
  EXPECT_EQ(stored.size(), size_t(n));
  EXPECT_EQ(verdict, "ok");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hlox::testing
