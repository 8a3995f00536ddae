// Security tests (issue 8 item 4) with real processes over loopback TCP: a CURVE broker with a
// ZAP allow-list serves an allowed worker and agent; a worker with an unknown key and one with
// no key never register and get no jobs; `hlox status` and `hlox search` work with keys; the
// broker refuses a non-loopback bind without keys unless --insecure. Plus the helpers (loopback
// rule, key files, the ZAP handler's RFC 27 replies) against fixed cases.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "broker/zap_handler.h"
#include "client/client.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "protocol/curve.h"
#include "protocol/protocol.h"
#include "tests/security/security_test_util.h"
#include "tests/service/service_test_util.h"
#include "tests/test_util.h"

namespace hlox::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

TEST(SecurityHelpers, LoopbackRule) {
  for (const char* a : {"tcp://127.0.0.1:5555", "tcp://127.1.2.3:1", "tcp://localhost:9",
                        "tcp://[::1]:5555", "ipc:///tmp/x", "inproc://b"}) {
    EXPECT_TRUE(proto::IsLoopbackAddress(a)) << a;
  }
  for (const char* a : {"tcp://0.0.0.0:5555", "tcp://*:5555", "tcp://10.0.0.1:5555",
                        "tcp://127.evil.example:5", "tcp://[::]:5555", "tcp://eth0:5555",
                        "tcp://localhost.example.com:1", "udp://127.0.0.1:5", ""}) {
    EXPECT_FALSE(proto::IsLoopbackAddress(a)) << a;
  }
}

TEST(SecurityHelpers, KeyFilesAndAllowList) {
  fs::path dir = TempDir();
  ASSERT_FALSE(dir.empty());
  std::string pub = Keygen(dir, "a");
  auto secret = proto::ReadZ85KeyFile((dir / "a.key").string());
  ASSERT_TRUE(secret.ok()) << secret.status();
  auto derived = proto::CurvePublicKey(*secret);
  ASSERT_TRUE(derived.ok());
  EXPECT_EQ(*derived, pub);  // derived public key matches the one keygen wrote
  EXPECT_EQ((fs::status(dir / "a.key").permissions() & fs::perms::group_read), fs::perms::none);
  fs::create_directories(dir / "allow");
  fs::copy_file(dir / "a.pub", dir / "allow" / "a.pub");
  std::ofstream(dir / "allow" / "notes.txt") << "ignored\n";
  auto allow = proto::LoadAllowList((dir / "allow").string());
  ASSERT_TRUE(allow.ok()) << allow.status();
  ASSERT_EQ(allow->size(), 1u);
  EXPECT_EQ((*allow)[0], *proto::DecodeZ85Key(pub));
  std::ofstream(dir / "allow" / "bad.pub") << "not a key\n";
  EXPECT_FALSE(proto::LoadAllowList((dir / "allow").string()).ok());
  EXPECT_FALSE(proto::LoadAllowList((dir / "missing").string()).ok());
  EXPECT_FALSE(proto::LoadCurveClientKeys((dir / "a.key").string(), "").ok());
  EXPECT_FALSE(proto::LoadCurveClientKeys("", "").value().enabled());
  fs::remove_all(dir);
}

// Speaks RFC 27 to the handler directly: the reply frames and codes, independent of libzmq's
// own use of it.
TEST(SecurityHelpers, ZapHandlerAnswersPerRfc27) {
  char pub[41], sec[41], other[41];
  ASSERT_EQ(zmq_curve_keypair(pub, sec), 0);
  ASSERT_EQ(zmq_curve_keypair(other, sec), 0);
  std::string allowed = *proto::DecodeZ85Key(pub), stranger = *proto::DecodeZ85Key(other);
  zmq::context_t ctx(1);
  auto zap = broker::ZapHandler::Start(ctx, {allowed});
  ASSERT_TRUE(zap.ok()) << zap.status();
  {
    zmq::socket_t req(ctx, zmq::socket_type::req);
    req.set(zmq::sockopt::linger, 0);
    req.set(zmq::sockopt::rcvtimeo, 3000);
    req.connect("inproc://zeromq.zap.01");
    auto ask = [&](const std::string& id, const std::string& mech, const std::string& cred) {
      std::vector<std::string> frames = {"1.0", id, "hlox", "10.1.2.3", "w", mech, cred};
      for (size_t i = 0; i < frames.size(); ++i) {
        req.send(zmq::buffer(frames[i]), i + 1 < frames.size() ? zmq::send_flags::sndmore
                                                               : zmq::send_flags::none);
      }
      std::vector<std::string> reply;
      zmq::message_t m;
      do {
        if (!req.recv(m)) break;
        reply.push_back(m.to_string());
      } while (m.more());
      return reply;
    };
    auto ok = ask("r1", "CURVE", allowed);
    ASSERT_EQ(ok.size(), 6u);
    EXPECT_EQ(ok[0], "1.0");
    EXPECT_EQ(ok[1], "r1");
    EXPECT_EQ(ok[2], "200");
    EXPECT_EQ(ok[4], pub) << "User-Id is the key's Z85 text (the broker maps it to roles)";
    auto no = ask("r2", "CURVE", stranger);
    ASSERT_EQ(no.size(), 6u);
    EXPECT_EQ(no[1], "r2");
    EXPECT_EQ(no[2], "400");
    EXPECT_EQ(ask("r3", "NULL", "")[2], "400");
    EXPECT_EQ(ask("r4", "CURVE", allowed.substr(0, 31))[2], "400");
  }
  EXPECT_EQ((*zap)->admitted(), 1);
  EXPECT_EQ((*zap)->refused(), 3);
  zap->reset();  // joins the thread and closes its socket before the context goes
}

TEST(Security, AllowedWorkerServesAllowedAgentStrangersGetNothing) {
  fs::path dir = TempDir();
  ASSERT_FALSE(dir.empty());
  for (const char* n : {"broker", "good", "agent", "stranger"}) Keygen(dir, n);
  fs::create_directories(dir / "allow");
  fs::copy_file(dir / "good.pub", dir / "allow" / "good.pub");
  fs::copy_file(dir / "agent.pub", dir / "allow" / "agent.pub");
  const std::string bkey = (dir / "broker.pub").string();
  auto agent_keys = proto::LoadCurveClientKeys((dir / "agent.key").string(), bkey);
  auto stranger_keys = proto::LoadCurveClientKeys((dir / "stranger.key").string(), bkey);
  ASSERT_TRUE(agent_keys.ok() && stranger_keys.ok());

  int port = FreePortPair();
  std::string addr = TcpAddress(port), control = proto::ControlAddressFor(addr);
  auto broker = StartBroker(addr, "", {"--curve-secret", (dir / "broker.key").string(),
                                       "--allow", (dir / "allow").string()});
  // Strangers first, so they have every chance to grab work.
  auto stranger = StartWorker(addr, "stranger", {"--curve-key", (dir / "stranger.key").string(),
                                                 "--broker-key", bkey});
  auto nokey = StartWorker(addr, "nokey");
  auto good = StartWorker(addr, "good", {"--curve-key", (dir / "good.key").string(),
                                         "--broker-key", bkey});
  bool registered = false;
  for (auto deadline = std::chrono::steady_clock::now() + 10s;
       !registered && std::chrono::steady_clock::now() < deadline;) {
    auto st = Status(control, *agent_keys, 500ms);
    registered = st.ok() && WorkerIds(*st).count("good");
    if (!registered) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(registered) << "the allowed worker never registered";

  // The allowed agent's jobs are all evaluated, all by the allowed worker.
  client::ClientOptions co;
  co.curve = *agent_keys;
  auto client = client::Client::Connect(addr, co);
  ASSERT_TRUE(client.ok());
  auto text = std::make_shared<const std::string>(AddModule());
  const int n = 6;
  for (int i = 0; i < n; ++i) {
    client::JobSpec j;
    j.id = "s" + std::to_string(i);
    j.campaign = "sec";
    j.module_text = text;
    j.use_cache = false;
    ASSERT_TRUE((*client)->Submit(std::move(j)).ok());
  }
  int dups = 0;
  auto results = Collect(**client, n, 30s, &dups);
  ASSERT_EQ(results.size(), size_t(n));
  for (auto& [id, r] : results) {
    EXPECT_EQ(r.record.status, JobStatus::kOk) << id << ": " << r.record.message;
    EXPECT_EQ(r.record.provenance.worker_id, "good") << id;
  }

  // The status CLI with the agent's keys sees exactly the allowed worker.
  std::string out;
  int rc = RunCapture(HloxBinary() + " status --json --broker " + addr + " --curve-key " +
                          (dir / "agent.key").string() + " --broker-key " + bkey, &out);
  ASSERT_EQ(rc, 0) << out;
  auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_EQ(WorkerIds(j), std::set<std::string>{"good"});
  EXPECT_EQ(j["totals"]["completed"].get<int>(), n);
  for (const auto& w : j["workers"]) EXPECT_EQ(w["jobs_done"].get<int>(), n);

  // `hlox search` with the agent's keys runs its evaluations on the secured fleet.
  rc = RunCapture(HloxBinary() + " search " + SourceDir() + "/examples/mlp_train_small.hlo" +
                      " --algo random --budget 4 --objective roofline --no-verdict --json --broker " +
                      addr + " --curve-key " + (dir / "agent.key").string() + " --broker-key " + bkey,
                  &out, /*drop_stderr=*/true);
  ASSERT_EQ(rc, 0) << out;
  auto sj = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(sj.is_discarded()) << out;
  EXPECT_EQ(sj["evaluations"].get<int>(), 4);

  // A stranger's key and no key get no answer at all, from the control channel or the front.
  EXPECT_FALSE(Status(control, *stranger_keys, 700ms).ok());
  EXPECT_FALSE(Status(control, proto::CurveClientKeys{}, 700ms).ok());
  client::ClientOptions so;
  so.curve = *stranger_keys;
  auto intruder = client::Client::Connect(addr, so);
  ASSERT_TRUE(intruder.ok());
  client::JobSpec bad;
  bad.id = "intruder";
  bad.campaign = "evil";
  bad.module_text = text;
  ASSERT_TRUE((*intruder)->Submit(std::move(bad)).ok());
  EXPECT_FALSE((*intruder)->Next(1500ms).has_value());

  // Still only the allowed worker, and nothing from the intruder reached the queues.
  auto st = Status(control, *agent_keys);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(WorkerIds(*st), std::set<std::string>{"good"});
  EXPECT_FALSE((*st)["queues"]["campaigns"].contains("evil")) << st->dump();
  EXPECT_EQ((*st)["totals"]["completed"].get<int>(), n + 4);
  EXPECT_TRUE(stranger->Running() && nokey->Running()) << "refused workers keep retrying, not crash";
  // Keys directly in the folder (the layout before roles) are worker+agent, never admin.
  for (const char* op : {"drain", "shutdown"}) {
    auto r = client::ControlRequest(control, op, "good", 1000ms, *agent_keys);
    ASSERT_FALSE(r.ok()) << op;
    EXPECT_NE(r.status().message().find("FORBIDDEN"), std::string::npos) << r.status();
  }
  EXPECT_TRUE(broker->Running());
  fs::remove_all(dir);
}

TEST(Security, BrokerRefusesPublicBindWithoutKeys) {
  int port = FreePortPair();
  std::string any = "tcp://0.0.0.0:" + std::to_string(port);
  std::string out;
  int rc = RunCapture(HloxBinary() + " broker --bind " + any, &out);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("--insecure"), std::string::npos) << out;
  // Keys without an allow-list are refused too (CURVE without ZAP would admit anyone).
  fs::path dir = TempDir();
  Keygen(dir, "broker");
  rc = RunCapture(HloxBinary() + " broker --bind " + any + " --curve-secret " +
                      (dir / "broker.key").string(), &out);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("--allow"), std::string::npos) << out;
  fs::remove_all(dir);
  // With --insecure it starts and answers on loopback.
  auto broker = StartBroker(any, "", {"--insecure"});
  bool up = false;
  for (int i = 0; i < 100 && !up; ++i) {
    up = Status(proto::ControlAddressFor(TcpAddress(port)), {}, 300ms).ok();
  }
  EXPECT_TRUE(up) << "--insecure broker did not answer";
  EXPECT_TRUE(broker->Running());
}

}  // namespace
}  // namespace hlox::testing
