// Hostile input at the broker and at a worker: tens of thousands of malformed frames (random
// bytes, truncated msgpack, wrong types, huge declared lengths, unknown commands, bad versions,
// wrong-length decisions, unparsable modules). Each is refused with an error reply (broker)
// or dropped (worker); correct jobs before and after still complete.
#include <random>
#include <thread>

#include "client/client.h"
#include "gtest/gtest.h"
#include "msgpack.hpp"
#include "nlohmann/json.hpp"
#include "protocol/frames.h"
#include "protocol/protocol.h"
#include "protocol/zmq_util.h"
#include "tests/service/service_test_util.h"

namespace hlox::testing {
namespace {

using namespace std::chrono_literals;
using proto::Command;

std::string Hdr(Command c) { return proto::MakeHeader(c); }

std::string SubmitBody(const std::string& id, const std::string& text) {
  proto::SubmitMsg s;
  s.job_id = id;
  s.module_text = text;
  s.module_hash = proto::TextHash(text);
  s.pipeline = "default";
  s.decisions = {{"simplify#0", {1, 0, 1}}};
  return proto::Encode(s);
}

// One malformed message (frames) of kind `k`; every kind must be refused by the broker.
std::vector<std::string> Hostile(int k, std::mt19937& rng) {
  std::string good = SubmitBody("h", "HloModule x");
  auto rnd = [&](size_t n) {
    std::string b(n, '\0');
    for (char& c : b) c = static_cast<char>(rng());
    return b;
  };
  switch (k % 12) {
    case 0: return {rnd(5 + rng() % 40)};                                  // random one frame
    case 1: return {Hdr(Command::kSubmit), rnd(1 + rng() % 60)};           // random body
    case 2: return {Hdr(Command::kSubmit), good.substr(0, rng() % good.size())};  // truncated
    case 3: return {Hdr(Command::kSubmit), good + "\x01"};                  // trailing bytes
    case 4: return {Hdr(Command::kSubmit), std::string("\xdd\xff\xff\xff\xf0", 5)};  // huge array
    case 5: return {Hdr(Command::kSubmit), std::string("\x81\xa2id\xdb\xff\xff\xff\xff", 9)};
    case 6: return {std::string("HX\x01", 3) + char('a' + rng() % 2), "x"};  // unknown command
    case 7: return {std::string("HX\x09S", 4), good};                     // other version
    case 8: {                                                              // wrong types
      msgpack::sbuffer b;
      msgpack::packer<msgpack::sbuffer> pk(b);
      pk.pack_map(3);
      pk.pack(std::string("id")); pk.pack(12);
      pk.pack(std::string("module_hash")); pk.pack(std::vector<int>{1});
      pk.pack(std::string("pipeline")); pk.pack(true);
      return {Hdr(Command::kSubmit), std::string(b.data(), b.size())};
    }
    case 9: {                                                              // 5-byte decisions
      msgpack::sbuffer b;
      msgpack::packer<msgpack::sbuffer> pk(b);
      pk.pack_map(4);
      pk.pack(std::string("id")); pk.pack(std::string("d"));
      pk.pack(std::string("module_hash")); pk.pack(std::string("h"));
      pk.pack(std::string("pipeline")); pk.pack(std::string("p"));
      pk.pack(std::string("decisions")); pk.pack_map(1); pk.pack(std::string("s#0"));
      pk.pack_bin(5); pk.pack_bin_body("\x01\x02\x03\x04\x05", 5);
      return {Hdr(Command::kSubmit), std::string(b.data(), b.size())};
    }
    case 10: return {Hdr(Command::kReady), rnd(1 + rng() % 30)};           // bad registration
    default: return {Hdr(Command::kSubmit), good, "third frame"};           // too many frames
  }
}

client::JobSpec Job(const std::string& id, const std::string& text) {
  client::JobSpec j;
  j.id = id;
  j.module_text = std::make_shared<const std::string>(text);
  j.pipeline = "default";
  j.use_cache = false;
  return j;
}

TEST(Hostile, BrokerRefusesEveryBadFrameAndKeepsServing) {
  std::string addr = TcpAddress(FreePortPair());
  auto broker = StartBroker(addr);
  auto w = StartWorker(addr, "w");
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 1, 10s));
  auto client = client::Client::Connect(addr);
  ASSERT_TRUE((*client)->Submit(Job("before", AddModule())).ok());
  auto before = Collect(**client, 1, 20s, nullptr);
  ASSERT_EQ(before["before"].record.status, JobStatus::kOk);

  zmq::context_t ctx(1);
  auto s = proto::ConnectDealer(ctx, addr, "attacker");
  ASSERT_TRUE(s.ok());
  std::mt19937 rng(1234);
  const int n = 24000;
  for (int i = 0; i < n; ++i) {
    std::vector<std::string> frames = Hostile(i, rng);
    for (size_t f = 0; f < frames.size(); ++f) {
      s->send(zmq::buffer(frames[f]), f + 1 < frames.size() ? zmq::send_flags::sndmore
                                                            : zmq::send_flags::none);
    }
  }
  int errors = 0, named = 0;
  auto deadline = std::chrono::steady_clock::now() + 30s;
  proto::Received in;
  while (errors < n && std::chrono::steady_clock::now() < deadline) {
    zmq::pollitem_t item{static_cast<void*>(*s), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, 100ms);
    while (proto::RecvMsg(*s, false, &in)) {
      auto f = proto::SplitFrames(in);
      ASSERT_TRUE(f.ok()) << f.status();
      ASSERT_EQ(f->command, Command::kError);
      auto e = proto::DecodeError(f->body);
      ASSERT_TRUE(e.ok());
      ++errors;
      named += e->job_id == "d";  // a SUBMIT that decodes but for its decisions names its job
    }
  }
  EXPECT_EQ(errors, n) << "every hostile message gets an error reply";
  EXPECT_GT(named, 0) << "an undecodable SUBMIT with a readable id gets an ERROR naming it";
  // Jobs after the attack: one good, one unparsable module, one with a wrong hash.
  ASSERT_TRUE((*client)->Submit(Job("after", AddModule("after"))).ok());
  ASSERT_TRUE((*client)->Submit(Job("unparsable", "HloModule broken\nENTRY {{{")).ok());
  client::JobSpec wrong = Job("wronghash", AddModule());
  wrong.module_hash = std::string(32, '0');
  ASSERT_TRUE((*client)->Submit(wrong).ok());
  auto after = Collect(**client, 3, 20s, nullptr);
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after["after"].record.status, JobStatus::kOk);
  EXPECT_EQ(after["unparsable"].record.status, JobStatus::kRunError);
  EXPECT_NE(after["unparsable"].record.message.find("parse"), std::string::npos);
  EXPECT_EQ(after["wronghash"].record.status, JobStatus::kRunError);
  EXPECT_TRUE(broker->Running());
  auto st = nlohmann::json::parse(*client::ControlRequest(proto::ControlAddressFor(addr), "status"));
  EXPECT_GE(st["totals"]["rejected_messages"].get<int>(), n);
}

TEST(Hostile, WorkerDropsBadFramesAndStillEvaluates) {
  int port = FreePortPair();
  std::string addr = TcpAddress(port);
  zmq::context_t ctx(1);
  auto router = proto::BindRouter(ctx, addr);  // the test plays the broker
  ASSERT_TRUE(router.ok());
  auto w = StartWorker(addr, "target");
  proto::Received in;
  auto wait_msg = [&](Command want, std::chrono::milliseconds t) -> std::optional<std::string> {
    auto deadline = std::chrono::steady_clock::now() + t;
    while (std::chrono::steady_clock::now() < deadline) {
      zmq::pollitem_t item{static_cast<void*>(*router), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, 50ms);
      while (proto::RecvMsg(*router, true, &in)) {
        auto f = proto::SplitFrames(in);
        if (f.ok() && f->command == want) return std::string(f->body);
      }
    }
    return std::nullopt;
  };
  ASSERT_TRUE(wait_msg(Command::kReady, 10s).has_value());
  std::mt19937 rng(99);
  for (int i = 0; i < 12000; ++i) {
    std::vector<std::string> frames = Hostile(i, rng);
    if (i % 12 == 1 || i % 12 == 2) frames[0] = Hdr(Command::kJob);  // bad JOB bodies
    ASSERT_TRUE(router->send(zmq::buffer(std::string("target")), zmq::send_flags::sndmore));
    for (size_t f = 0; f < frames.size(); ++f) {
      router->send(zmq::buffer(frames[f]), f + 1 < frames.size() ? zmq::send_flags::sndmore
                                                                 : zmq::send_flags::none);
    }
  }
  auto send_job = [&](const std::string& id, const std::string& text) {
    proto::JobMsg j{id, 1, proto::TextHash(text), text, "default", {}, 10000,
                    proto::kKindEvaluate, {}};
    ASSERT_EQ(proto::SendMsg(*router, "target", Command::kJob, proto::Encode(j)),
              proto::SendResult::kOk);
  };
  send_job("bad-module", "HloModule broken\nENTRY {{{");
  send_job("good", AddModule());
  std::map<std::string, ResultRecord> got;
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (got.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    auto body = wait_msg(Command::kDone, 1s);
    if (!body) continue;
    auto d = proto::DecodeDone(*body);
    ASSERT_TRUE(d.ok());
    got[d->job_id] = *proto::DecodeRecord(d->record);
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got["bad-module"].status, JobStatus::kRunError);
  EXPECT_EQ(got["good"].status, JobStatus::kOk) << got["good"].message;
  EXPECT_TRUE(w->Running());
}

}  // namespace
}  // namespace hlox::testing
