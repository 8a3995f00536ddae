// Version and build skew: the build id, READY's protocol and build keys (and READYs that predate
// them), a broker refusing a frame of another protocol version and a READY announcing one, a
// real worker that stops (exit kExitRefused, not a reconnect loop) when the broker speaks
// another protocol or refuses it, and a fleet of two builds (HLOX_BUILD_ID) that status reports
// as mixed while every record names the build that measured it.
#include <sys/wait.h>

#include <cstdio>
#include <set>
#include <thread>
#include <utility>

#include "client/client.h"
#include "common/build_info.h"
#include "cost/provenance.h"
#include "cost/result_json.h"
#include "gtest/gtest.h"
#include "msgpack.hpp"
#include "nlohmann/json.hpp"
#include "protocol/frames.h"
#include "protocol/protocol.h"
#include "protocol/record_scan.h"
#include "protocol/zmq_util.h"
#include "tests/service/service_test_util.h"
#include "tests/test_util.h"
#include "worker/worker.h"

namespace hlox::testing {
namespace {

using namespace std::chrono_literals;

TEST(BuildId, NamesTheVersionAndACommit) {
  const std::string id(BuildId());
  EXPECT_EQ(id.rfind(std::string(HLOX_VERSION) + "+", 0), 0u) << id;
  EXPECT_GT(id.size(), std::string(HLOX_VERSION).size() + 1) << id;
}

TEST(RecordProvenance, CarriesTheBuildIdOnTheWireAndInJson) {
  EXPECT_EQ(MachineProvenance().build_id, AnnouncedBuildId());
  ResultRecord r;
  r.status = JobStatus::kOk;
  r.provenance.build_id = "0.1.0+0123456789ab-dirty";
  const std::string bytes = proto::EncodeRecord(r);
  auto back = proto::DecodeRecord(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->provenance.build_id, r.provenance.build_id);
  EXPECT_TRUE(proto::ScanRecord(bytes).ok());  // the broker's scan takes it
  auto json = ResultFromJson(ToJson(r));
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(json->provenance.build_id, r.provenance.build_id);
}

TEST(ReadyCodec, CarriesProtocolAndBuild) {
  proto::ReadyMsg r{"w1", "h", "cpu-avx2", HLOX_VERSION, 2, 1, 3};
  r.protocol = 7;
  r.build = "0.1.0+abc";
  auto d = proto::DecodeReady(proto::Encode(r));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->protocol, 7u);
  EXPECT_EQ(d->build, "0.1.0+abc");
  EXPECT_EQ(d->credit, 3u);
}

TEST(ReadyCodec, AReadyThatPredatesTheKeysDecodes) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_map(3);
  pk.pack(std::string("worker_id")); pk.pack(std::string("old"));
  pk.pack(std::string("class")); pk.pack(std::string("cpu"));
  pk.pack(std::string("credit")); pk.pack(1);
  auto d = proto::DecodeReady(std::string_view(buf.data(), buf.size()));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->protocol, proto::kVersion);  // the header's version, which passed the check
  EXPECT_EQ(d->build, "");
  // A protocol that is not an unsigned integer is malformed.
  msgpack::sbuffer bad;
  msgpack::packer<msgpack::sbuffer> pb(bad);
  pb.pack_map(3);
  pb.pack(std::string("worker_id")); pb.pack(std::string("old"));
  pb.pack(std::string("class")); pb.pack(std::string("cpu"));
  pb.pack(std::string("protocol")); pb.pack(std::string("two"));
  EXPECT_FALSE(proto::DecodeReady(std::string_view(bad.data(), bad.size())).ok());
}

// Sends raw frames (a header of any version) from a DEALER.
void SendRaw(zmq::socket_t& s, const std::string& header, const std::string& body) {
  s.send(zmq::buffer(header), zmq::send_flags::sndmore);
  s.send(zmq::buffer(body), zmq::send_flags::none);
}

// Waits up to 5 s for an ERROR on `s` and returns it decoded.
std::optional<proto::ErrorMsg> AwaitError(zmq::socket_t& s, bool router = false,
                                          std::string* identity = nullptr) {
  proto::Received in;
  for (int i = 0; i < 500; ++i) {
    while (proto::RecvMsg(s, router, &in)) {
      if (identity) *identity = in.identity;
      auto f = proto::SplitFrames(in);
      if (!f.ok() || f->command != proto::Command::kError) continue;
      auto e = proto::DecodeError(f->body);
      if (e.ok()) return *e;
    }
    std::this_thread::sleep_for(10ms);
  }
  return std::nullopt;
}

std::string ReadyBody(uint32_t protocol) {
  proto::ReadyMsg r{"future-worker", "h", "cpu", "9.9.9", 1, 1, 1};
  r.protocol = protocol;
  r.build = "9.9.9+future";
  return proto::Encode(r);
}

TEST(BrokerRefuses, AFrameOfAnotherProtocolVersion) {
  const std::string addr = TcpAddress(FreePortPair());
  auto broker = StartBroker(addr);
  zmq::context_t ctx(1);
  auto dealer = proto::ConnectDealer(ctx, addr, "v2-peer");
  ASSERT_TRUE(dealer.ok()) << dealer.status();
  std::this_thread::sleep_for(300ms);  // the broker binds after it starts
  const std::string header{'H', 'X', 2, static_cast<char>(proto::Command::kReady)};
  std::optional<proto::ErrorMsg> e;
  for (int tries = 0; tries < 10 && !e; ++tries) {
    SendRaw(*dealer, header, ReadyBody(2));
    e = AwaitError(*dealer);
  }
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code, proto::kErrBadVersion);
  EXPECT_NE(e->message.find("protocol version 2"), std::string::npos) << e->message;
}

TEST(BrokerRefuses, AReadyAnnouncingAnotherProtocol) {
  const std::string addr = TcpAddress(FreePortPair());
  const std::string control = proto::ControlAddressFor(addr);
  auto broker = StartBroker(addr);
  ASSERT_TRUE(WaitForWorkers(control, 0, 10s));
  zmq::context_t ctx(1);
  auto dealer = proto::ConnectDealer(ctx, addr, "announces-v2");
  ASSERT_TRUE(dealer.ok()) << dealer.status();
  ASSERT_EQ(proto::SendMsg(*dealer, "", proto::Command::kReady, ReadyBody(2)),
            proto::SendResult::kOk);
  std::optional<proto::ErrorMsg> e = AwaitError(*dealer);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code, proto::kErrBadVersion);
  EXPECT_NE(e->message.find("speaks protocol 2"), std::string::npos) << e->message;
  EXPECT_NE(e->message.find("9.9.9+future"), std::string::npos) << e->message;
  auto st = client::ControlRequest(control, "status");
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(nlohmann::json::parse(*st)["workers"].size(), 0u) << "the refused worker registered";
  // The same READY with this protocol is taken.
  ASSERT_EQ(proto::SendMsg(*dealer, "", proto::Command::kReady, ReadyBody(proto::kVersion)),
            proto::SendResult::kOk);
  EXPECT_TRUE(WaitForWorkers(control, 1, 5s));
}

// A fake broker that answers the worker's first READY with `reply` (raw header + body), and
// with `repeat` sends it again every 100 ms as a broker heartbeats; returns the worker's exit
// status (-1 when it did not exit within 10 s).
int WorkerExitAgainst(const std::string& header, const std::string& body,
                      const std::vector<std::string>& extra = {}, bool repeat = false) {
  const std::string addr = TcpAddress(FreePortPair());
  zmq::context_t ctx(1);
  auto router = proto::BindRouter(ctx, addr);
  if (!router.ok()) return -2;
  auto worker = StartWorker(addr, "skewed", extra);
  proto::Received in;
  bool answered = false;
  for (int i = 0; i < 1000 && !answered; ++i) {
    while (!answered && proto::RecvMsg(*router, true, &in)) {
      auto f = proto::SplitFrames(in);
      if (!f.ok() || f->command != proto::Command::kReady) continue;
      router->send(zmq::buffer(in.identity), zmq::send_flags::sndmore);
      router->send(zmq::buffer(header), zmq::send_flags::sndmore);
      router->send(zmq::buffer(body), zmq::send_flags::none);
      answered = true;
    }
    if (!answered) std::this_thread::sleep_for(10ms);
  }
  if (!answered) return -3;
  for (int i = 0; repeat && i < 100; ++i) {
    const int st = worker->Wait(100ms);
    if (st != -1) return st;
    router->send(zmq::buffer(in.identity), zmq::send_flags::sndmore);
    router->send(zmq::buffer(header), zmq::send_flags::sndmore);
    router->send(zmq::buffer(body), zmq::send_flags::none);
  }
  return worker->Wait(10s);
}

// A broker of protocol 2 heartbeating in its protocol: nothing it sends is readable, so the
// worker stops after a few such frames in a row (one alone is only a bad frame: Hostile.*).
TEST(WorkerStops, WhenTheBrokerSpeaksAnotherProtocol) {
  const std::string header{'H', 'X', 2, static_cast<char>(proto::Command::kHeartbeat)};
  const int st = WorkerExitAgainst(header, proto::Encode(proto::HeartbeatMsg{42}), {}, /*repeat=*/true);
  ASSERT_TRUE(WIFEXITED(st)) << "the worker kept running (status " << st << ")";
  EXPECT_EQ(WEXITSTATUS(st), worker::kExitRefused);
}

TEST(WorkerStops, WhenTheBrokerRefusesItsProtocol) {
  const std::string header = proto::MakeHeader(proto::Command::kError);
  const std::string body = proto::Encode(proto::ErrorMsg{"", proto::kErrBadVersion, "speaks 1"});
  int st = WorkerExitAgainst(header, body);
  ASSERT_TRUE(WIFEXITED(st)) << "the worker kept running (status " << st << ")";
  EXPECT_EQ(WEXITSTATUS(st), worker::kExitRefused);
  // A supervisor does not restart a refused worker (it would only be refused again).
  st = WorkerExitAgainst(header, body, {"--supervise"});
  ASSERT_TRUE(WIFEXITED(st)) << "the supervisor kept restarting (status " << st << ")";
  EXPECT_EQ(WEXITSTATUS(st), worker::kExitRefused);
}

TEST(MixedBuilds, StatusShowsThemAndRecordsNameTheBuild) {
  const std::string addr = TcpAddress(FreePortPair());
  const std::string control = proto::ControlAddressFor(addr);
  auto broker = StartBroker(addr);
  auto same = StartWorker(addr, "same-build");
  auto other = StartWorker(addr, "other-build", {}, {"HLOX_BUILD_ID=other"});
  ASSERT_TRUE(WaitForWorkers(control, 2, 10s));
  auto st = client::ControlRequest(control, "status");
  ASSERT_TRUE(st.ok()) << st.status();
  auto status = nlohmann::json::parse(*st);
  std::map<std::string, std::string> build_of;
  for (const auto& w : status["workers"]) build_of[w["id"]] = w["build"];
  EXPECT_EQ(build_of["same-build"], std::string(BuildId()));
  EXPECT_EQ(build_of["other-build"], "other");
  EXPECT_EQ(status["worker_builds"].size(), 2u) << status["worker_builds"].dump();
  EXPECT_EQ(status["broker"]["build"], std::string(BuildId()));

  auto [code, out] = RunHlox("status --broker " + addr, true, 30);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("mixed builds: 2 ("), std::string::npos) << out;
  EXPECT_NE(out.find("other: 1 worker"), std::string::npos) << out;
  auto [vcode, version] = RunHlox("--version", true, 30);
  EXPECT_NE(version.find(std::string(BuildId())), std::string::npos) << version;

  auto client = client::Client::Connect(addr);
  ASSERT_TRUE(client.ok());
  auto text = std::make_shared<const std::string>(AddModule());
  const int n = 12;
  for (int i = 0; i < n; ++i) {
    client::JobSpec j;
    j.id = "mix" + std::to_string(i);
    j.campaign = "mixed";
    j.module_text = text;
    j.use_cache = false;
    ASSERT_TRUE((*client)->Submit(std::move(j)).ok());
  }
  auto results = Collect(**client, n, 60s, nullptr);
  ASSERT_EQ(results.size(), size_t(n));
  std::set<std::string> seen;
  for (const auto& [id, r] : results) {
    const Provenance& p = r.record.provenance;
    ASSERT_TRUE(build_of.count(p.worker_id)) << id << " from " << p.worker_id;
    EXPECT_EQ(p.build_id, build_of[p.worker_id]) << id;
    seen.insert(p.build_id);
  }
  EXPECT_GE(seen.size(), 1u);
}

}  // namespace
}  // namespace hlox::testing
