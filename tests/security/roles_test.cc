// Roles for keys (issue 31 item 1) with a real CURVE broker, real keys and real clients over
// loopback TCP: worker keys serve but cannot submit or control; agent keys submit, read status
// and cancel only their own campaigns; admin keys do everything; CONTROL on the main socket obeys
// the same rules; refusals are counted; SIGHUP reloads the allow folder (a removed role is lost
// on an open connection); campaign owners survive a restart; the metrics endpoint's bind rule
// and bearer token. Plus the role table and the token comparison against fixed cases.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <httplib.h>

#include "broker/key_roles.h"
#include "client/client.h"
#include "gtest/gtest.h"
#include "monitor/http_monitor.h"
#include "nlohmann/json.hpp"
#include "protocol/curve.h"
#include "protocol/protocol.h"
#include "tests/security/security_test_util.h"
#include "tests/service/service_test_util.h"

namespace hlox::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// A folder of keys: name.key / name.pub made by `hlox keygen`, and the broker's pair.
class KeyDir {
 public:
  KeyDir() : dir_(TempDir()) { Keygen(dir_, "broker"); }
  ~KeyDir() { fs::remove_all(dir_); }
  const fs::path& path() const { return dir_; }
  fs::path allow() const { return dir_ / "allow"; }
  // Makes key `name` and places its .pub in allow/`folder` ("" = directly in allow/).
  void Add(const std::string& name, const std::string& folder) {
    if (!fs::exists(dir_ / (name + ".key"))) Keygen(dir_, name);
    fs::path to = folder.empty() ? allow() : allow() / folder;
    fs::create_directories(to);
    fs::copy_file(dir_ / (name + ".pub"), to / (name + ".pub"), fs::copy_options::overwrite_existing);
  }
  proto::CurveClientKeys Keys(const std::string& name) const {
    return *proto::LoadCurveClientKeys((dir_ / (name + ".key")).string(),
                                       (dir_ / "broker.pub").string());
  }
  std::vector<std::string> BrokerFlags() const {
    return {"--curve-secret", (dir_ / "broker.key").string(), "--allow", allow().string()};
  }
  std::vector<std::string> WorkerFlags(const std::string& name) const {
    return {"--curve-key", (dir_ / (name + ".key")).string(), "--broker-key",
            (dir_ / "broker.pub").string()};
  }

 private:
  fs::path dir_;
};

std::unique_ptr<client::Client> Connect(const std::string& addr, const proto::CurveClientKeys& k) {
  client::ClientOptions co;
  co.curve = k;
  auto c = client::Client::Connect(addr, co);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? std::move(*c) : nullptr;
}

// Submits one job and waits for its result; the record's message says why when refused.
client::JobResult SubmitOne(client::Client& c, const std::string& id, const std::string& campaign) {
  static const auto text = std::make_shared<const std::string>(AddModule());
  client::JobSpec j;
  j.id = id;
  j.campaign = campaign;
  j.module_text = text;
  j.use_cache = false;
  EXPECT_TRUE(c.Submit(std::move(j)).ok());
  for (auto deadline = std::chrono::steady_clock::now() + 20s;
       std::chrono::steady_clock::now() < deadline;) {
    std::optional<client::JobResult> r = c.Next(200ms);
    if (r && r->job_id == id) return *r;
  }
  ADD_FAILURE() << "no answer for " << id;
  return {};
}

bool Forbidden(const absl::StatusOr<std::string>& r) {
  return !r.ok() && r.status().message().find("FORBIDDEN") != std::string::npos;
}

int64_t Count(const nlohmann::json& status, const char* op, const char* reason) {
  const auto& f = status["totals"]["forbidden"];
  return f.contains(op) && f[op].contains(reason) ? f[op][reason].get<int64_t>() : 0;
}

TEST(RoleTable, FoldersGiveRolesFlatKeysAreWorkerAndAgent) {
  KeyDir k;
  k.Add("w", "worker");
  k.Add("a", "agent");
  k.Add("boss", "admin");
  k.Add("both", "worker");
  k.Add("both", "agent");
  k.Add("old", "");
  auto z85 = [&](const std::string& n) {
    std::ifstream in(k.path() / (n + ".pub"));
    std::string s;
    in >> s;
    return s;
  };
  auto t = broker::KeyRoles::Load(k.allow().string(), z85("broker"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->Lookup(z85("w")), broker::kRoleWorker);
  EXPECT_EQ(t->Lookup(z85("a")), broker::kRoleAgent);
  EXPECT_EQ(t->Lookup(z85("boss")), broker::kRoleAdmin);
  EXPECT_EQ(t->Lookup(z85("both")), broker::kRoleWorker | broker::kRoleAgent);
  EXPECT_EQ(t->Lookup(z85("old")), broker::kRoleWorker | broker::kRoleAgent);
  EXPECT_EQ(t->Lookup(z85("broker")), broker::kRoleAdmin);
  EXPECT_EQ(t->Lookup("not a key"), broker::kRoleNone);
  EXPECT_EQ(t->legacy(), 1);
  EXPECT_EQ(t->size(), 6u);
  EXPECT_EQ(t->BinaryKeys().size(), 6u);
  EXPECT_EQ(t->Summary(), "worker 3, agent 3, admin 2");
  EXPECT_TRUE(broker::HasRole(broker::kRoleAdmin, broker::kRoleWorker));
  EXPECT_FALSE(broker::HasRole(broker::kRoleAgent, broker::kRoleWorker));
  EXPECT_EQ(broker::RoleNames(broker::kRoleWorker | broker::kRoleAgent), "worker+agent");
  // A malformed key in a role folder, a role "folder" that is a file, a missing folder: errors.
  std::ofstream(k.allow() / "admin" / "bad.pub") << "not a key\n";
  EXPECT_FALSE(broker::KeyRoles::Load(k.allow().string(), "").ok());
  fs::remove(k.allow() / "admin" / "bad.pub");
  fs::remove_all(k.allow() / "agent");
  std::ofstream(k.allow() / "agent") << "a file\n";
  EXPECT_FALSE(broker::KeyRoles::Load(k.allow().string(), "").ok());
  EXPECT_FALSE(broker::KeyRoles::Load((k.path() / "missing").string(), "").ok());
}

TEST(MetricsToken, BearerComparison) {
  EXPECT_TRUE(monitor::BearerMatches("Bearer s3cret", "s3cret"));
  for (const char* h : {"", "Bearer ", "Bearer s3cre", "Bearer s3cretX", "bearer s3cret",
                        "Basic s3cret", "Bearer S3cret", "s3cret"}) {
    EXPECT_FALSE(monitor::BearerMatches(h, "s3cret")) << h;
  }
  EXPECT_FALSE(monitor::BearerMatches("Bearer ", ""));
  fs::path d = TempDir();
  std::ofstream(d / "t") << "  tok-123 \nsecond line\n";
  std::ofstream(d / "empty") << "\n";
  EXPECT_EQ(monitor::ReadMetricsToken((d / "t").string()).value_or(""), "tok-123");
  EXPECT_FALSE(monitor::ReadMetricsToken((d / "empty").string()).ok());
  EXPECT_FALSE(monitor::ReadMetricsToken((d / "missing").string()).ok());
  fs::remove_all(d);
}

TEST(Roles, EachRoleDoesWhatItMayOnBothSockets) {
  KeyDir k;
  k.Add("w", "worker");
  k.Add("a1", "agent");
  k.Add("a2", "agent");
  k.Add("boss", "admin");
  int port = FreePortPair();
  std::string addr = TcpAddress(port), control = proto::ControlAddressFor(addr);
  auto broker = StartBroker(addr, "", k.BrokerFlags());
  auto worker = StartWorker(addr, "w1", k.WorkerFlags("w"));
  bool up = false;
  for (auto deadline = std::chrono::steady_clock::now() + 15s;
       !up && std::chrono::steady_clock::now() < deadline;) {
    auto st = Status(control, k.Keys("boss"), 500ms);
    up = st.ok() && WorkerIds(*st).count("w1");
    if (!up) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(up) << "the worker-key worker never registered";

  // A worker key may not submit or control, on either socket.
  auto wc = Connect(addr, k.Keys("w"));
  ASSERT_TRUE(wc);
  client::JobResult r = SubmitOne(*wc, "w-job", "wc");
  EXPECT_EQ(r.record.status, JobStatus::kRunError);
  EXPECT_NE(r.record.message.find("FORBIDDEN"), std::string::npos) << r.record.message;
  for (const std::string& where : {control, addr}) {
    EXPECT_TRUE(Forbidden(client::ControlRequest(where, "status", "", 1000ms, k.Keys("w")))) << where;
  }

  // An agent submits, reads status, cancels its own campaign; not drain or shutdown.
  auto a1 = Connect(addr, k.Keys("a1"));
  ASSERT_TRUE(a1);
  r = SubmitOne(*a1, "a1-job", "camp1");
  EXPECT_EQ(r.record.status, JobStatus::kOk) << r.record.message;
  EXPECT_TRUE(Status(control, k.Keys("a1")).ok());
  EXPECT_TRUE(Status(addr, k.Keys("a1")).ok()) << "status on the main socket";
  EXPECT_TRUE(client::ControlRequest(control, "cancel", "camp1", 1000ms, k.Keys("a1")).ok());
  for (const std::string& where : {control, addr}) {
    EXPECT_TRUE(Forbidden(client::ControlRequest(where, "drain", "w1", 1000ms, k.Keys("a1"))));
    EXPECT_TRUE(Forbidden(client::ControlRequest(where, "shutdown", "", 1000ms, k.Keys("a1"))));
  }

  // Another agent may not submit into, or cancel, a1's campaign (nor one nobody owns yet).
  auto a2 = Connect(addr, k.Keys("a2"));
  ASSERT_TRUE(a2);
  r = SubmitOne(*a2, "a2-into-camp1", "camp1");
  EXPECT_NE(r.record.message.find("FORBIDDEN"), std::string::npos) << r.record.message;
  for (const std::string& where : {control, addr}) {
    EXPECT_TRUE(Forbidden(client::ControlRequest(where, "cancel", "camp1", 1000ms, k.Keys("a2"))));
  }
  EXPECT_TRUE(Forbidden(client::ControlRequest(control, "cancel", "nobodys", 1000ms, k.Keys("a2"))));
  r = SubmitOne(*a2, "a2-own", "camp2");
  EXPECT_EQ(r.record.status, JobStatus::kOk) << r.record.message;

  // Admin cancels anyone's campaign and submits anywhere.
  EXPECT_TRUE(client::ControlRequest(addr, "cancel", "camp2", 1000ms, k.Keys("boss")).ok());
  auto boss = Connect(addr, k.Keys("boss"));
  ASSERT_TRUE(boss);
  r = SubmitOne(*boss, "boss-job", "camp2");
  EXPECT_EQ(r.record.status, JobStatus::kCancelled) << "camp2 was cancelled: " << r.record.message;

  // Every refusal was counted, by operation and reason, and the broker kept running.
  auto st = Status(control, k.Keys("boss"));
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(Count(*st, "submit", "role"), 1) << st->dump();
  EXPECT_EQ(Count(*st, "submit", "owner"), 1);
  EXPECT_EQ(Count(*st, "status", "role"), 2);
  EXPECT_EQ(Count(*st, "drain", "role"), 2);
  EXPECT_EQ(Count(*st, "shutdown", "role"), 2);
  EXPECT_EQ(Count(*st, "cancel", "owner"), 3);
  EXPECT_EQ((*st)["security"]["keys"]["admin"].get<int>(), 2) << "boss and the broker's own key";
  EXPECT_EQ((*st)["security"]["campaign_owners"].get<int>(), 2);
  EXPECT_TRUE(broker->Running());
  // Admin drains and shuts down.
  EXPECT_TRUE(client::ControlRequest(control, "drain", "w1", 1000ms, k.Keys("boss")).ok());
  EXPECT_TRUE(client::ControlRequest(addr, "shutdown", "", 1000ms, k.Keys("boss")).ok());
  EXPECT_NE(broker->Wait(10s), -1) << "admin shutdown stops the broker";
}

TEST(Roles, SighupReloadsTheAllowFolder) {
  KeyDir k;
  k.Add("a", "agent");
  Keygen(k.path(), "late");
  int port = FreePortPair();
  std::string addr = TcpAddress(port), control = proto::ControlAddressFor(addr);
  auto broker = StartBroker(addr, "", k.BrokerFlags());
  auto wait_for = [](const std::function<bool()>& cond) {
    for (auto deadline = std::chrono::steady_clock::now() + 10s;
         std::chrono::steady_clock::now() < deadline;) {
      if (cond()) return true;
      std::this_thread::sleep_for(100ms);
    }
    return false;
  };
  ASSERT_TRUE(wait_for([&] { return Status(control, k.Keys("a"), 300ms).ok(); }));
  EXPECT_FALSE(Status(control, k.Keys("late"), 500ms).ok()) << "not on the list yet";

  // Added as admin at runtime: admitted and may drain (the worker is unknown, but not forbidden).
  k.Add("late", "admin");
  broker->Kill(SIGHUP);
  ASSERT_TRUE(wait_for([&] { return Status(control, k.Keys("late"), 300ms).ok(); }));
  auto drain = client::ControlRequest(control, "drain", "nobody", 1000ms, k.Keys("late"));
  EXPECT_FALSE(Forbidden(drain)) << drain.status();

  // `a` is an agent on an open connection: its job is queued (no worker) and it may cancel its
  // own campaign, which answers the job.
  auto ac = Connect(addr, k.Keys("a"));
  ASSERT_TRUE(ac);
  static const auto text = std::make_shared<const std::string>(AddModule());
  auto submit = [&](const std::string& id) {
    client::JobSpec j;
    j.id = id;
    j.campaign.assign(1, 'c');  // not = "c": GCC 12 warns -Wrestrict (a false positive) on that at -O3
    j.module_text = text;
    j.use_cache = false;
    EXPECT_TRUE(ac->Submit(std::move(j)).ok());
  };
  auto answer = [&](const std::string& id) {
    for (auto deadline = std::chrono::steady_clock::now() + 10s;
         std::chrono::steady_clock::now() < deadline;) {
      std::optional<client::JobResult> res = ac->Next(200ms);
      if (res && res->job_id == id) return res->record.message;
    }
    return std::string("(no answer)");
  };
  submit("before");
  ASSERT_TRUE(wait_for([&] {
    auto st = Status(control, k.Keys("a"), 300ms);
    return st.ok() && (*st)["queues"]["pending"].get<int>() == 1;
  }));
  EXPECT_TRUE(client::ControlRequest(control, "cancel", "c", 1000ms, k.Keys("a")).ok());
  EXPECT_NE(answer("before").find("cancel"), std::string::npos);

  // Moved from agent/ to worker/: on the same open connection SUBMIT is refused at once.
  fs::remove(k.allow() / "agent" / "a.pub");
  k.Add("a", "worker");
  broker->Kill(SIGHUP);
  ASSERT_TRUE(wait_for([&] {
    return Forbidden(client::ControlRequest(control, "status", "", 300ms, k.Keys("a")));
  }));
  submit("after");
  EXPECT_NE(answer("after").find("FORBIDDEN"), std::string::npos)
      << "the open connection kept the agent role after the reload";

  // A bad key file makes the reload fail: the old list stays (late is still admin).
  std::ofstream(k.allow() / "admin" / "broken.pub") << "garbage\n";
  broker->Kill(SIGHUP);
  std::this_thread::sleep_for(700ms);
  ASSERT_TRUE(broker->Running());
  EXPECT_FALSE(Forbidden(client::ControlRequest(control, "drain", "nobody", 1000ms, k.Keys("late"))));

  // Removed altogether: new connections are refused by ZAP, the open one gets FORBIDDEN.
  fs::remove(k.allow() / "admin" / "broken.pub");
  fs::remove(k.allow() / "admin" / "late.pub");
  fs::remove(k.allow() / "worker" / "a.pub");
  broker->Kill(SIGHUP);
  ASSERT_TRUE(wait_for([&] { return !Status(control, k.Keys("late"), 300ms).ok(); }));
  submit("gone");
  EXPECT_NE(answer("gone").find("FORBIDDEN"), std::string::npos);
  // The broker's own key pair is admin (its monitor uses it) and sees the refusals counted.
  auto st = Status(control, k.Keys("broker"));
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(Count(*st, "submit", "role"), 1) << st->dump();
  EXPECT_EQ(Count(*st, "submit", "unknown_key"), 1);
  EXPECT_GE(Count(*st, "status", "role"), 1);
  EXPECT_EQ((*st)["security"]["keys"]["agent"].get<int>(), 0);
  EXPECT_TRUE(broker->Running());
}

TEST(Roles, CampaignOwnersSurviveARestart) {
  KeyDir k;
  k.Add("a1", "agent");
  k.Add("a2", "agent");
  fs::path db = k.path() / "store.db";
  int port = FreePortPair();
  std::string addr = TcpAddress(port), control = proto::ControlAddressFor(addr);
  {
    auto broker = StartBroker(addr, db.string(), k.BrokerFlags());
    auto a1 = Connect(addr, k.Keys("a1"));
    ASSERT_TRUE(a1);
    // No worker: the job stays queued, but the campaign is a1's from its first SUBMIT.
    client::JobSpec j;
    j.id = "first";
    j.campaign = "mine";
    j.module_text = std::make_shared<const std::string>(AddModule());
    ASSERT_TRUE((*a1).Submit(std::move(j)).ok());
    bool owned = false;
    for (int i = 0; i < 100 && !owned; ++i) {
      auto st = Status(control, k.Keys("a1"), 300ms);
      owned = st.ok() && (*st)["security"]["campaign_owners"].get<int>() == 1;
      if (!owned) std::this_thread::sleep_for(50ms);
    }
    ASSERT_TRUE(owned);
    broker->Kill(9);
    broker->Wait(5s);
  }
  auto broker = StartBroker(addr, db.string(), k.BrokerFlags());
  absl::StatusOr<std::string> r;
  for (int i = 0; i < 100; ++i) {
    r = client::ControlRequest(control, "cancel", "mine", 300ms, k.Keys("a2"));
    if (r.ok() || Forbidden(r)) break;
  }
  EXPECT_TRUE(Forbidden(r)) << r.status();
  EXPECT_TRUE(client::ControlRequest(control, "cancel", "mine", 1000ms, k.Keys("a1")).ok());
}

TEST(Roles, MetricsBindRuleAndToken) {
  // A public metrics bind without a token is refused at start, with the flag to use.
  int port = FreePortPair(), mport = FreePortPair();
  std::string out;
  int rc = RunCapture("timeout 20 " + HloxBinary() + " broker --bind " + TcpAddress(port) + " --metrics 0.0.0.0:" +
                          std::to_string(mport), &out);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("--metrics-token-file"), std::string::npos) << out;
  EXPECT_FALSE(monitor::HttpMonitor::Start({"0.0.0.0:0", "tcp://127.0.0.1:1", {}, ""}).ok());

  // With a token every endpoint wants it.
  fs::path d = TempDir();
  std::ofstream(d / "token") << "t0k3n-for-test\n";
  auto broker = StartBroker(TcpAddress(port), "",
                            {"--metrics", "127.0.0.1:" + std::to_string(mport),
                             "--metrics-token-file", (d / "token").string()});
  httplib::Client http("127.0.0.1", mport);
  http.set_connection_timeout(1, 0);
  int status = 0;
  for (int i = 0; i < 100 && status == 0; ++i) {
    if (auto res = http.Get("/metrics")) {
      status = res->status;
    } else {
      std::this_thread::sleep_for(50ms);
    }
  }
  EXPECT_EQ(status, 401) << "without a token (0: the endpoint never answered)";
  for (const char* path : {"/metrics", "/status.json", "/"}) {
    auto wrong = http.Get(path, {{"Authorization", "Bearer wrong"}});
    ASSERT_TRUE(wrong) << path;
    EXPECT_EQ(wrong->status, 401) << path;
    auto ok = http.Get(path, {{"Authorization", "Bearer t0k3n-for-test"}});
    ASSERT_TRUE(ok) << path;
    EXPECT_EQ(ok->status, 200) << path;
  }
  auto metrics = http.Get("/metrics", {{"Authorization", "Bearer t0k3n-for-test"}});
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("hlox_forbidden_total"), std::string::npos);
  EXPECT_TRUE(broker->Running());
  fs::remove_all(d);
}

}  // namespace
}  // namespace hlox::testing
