// Wire-protocol codecs: round trips, byte layout of decisions checked against hand-built bytes,
// and hostile input (random bytes, truncation, huge declared lengths, wrong types, missing
// keys, trailing bytes) refused with statuses, never crashes or huge allocations.
#include <random>

#include "gtest/gtest.h"
#include "msgpack.hpp"
#include "protocol/msgpack_view.h"
#include "protocol/protocol.h"

namespace hlox::proto {
namespace {

SubmitMsg SampleSubmit() {
  SubmitMsg s;
  s.job_id = "job-1";
  s.campaign = "camp";
  s.module_text = "HloModule m";
  s.module_hash = TextHash(s.module_text);
  s.pipeline = "default";
  s.decisions = {{"simplify#0", {0, 1, -2, 70000}}, {"fusion#0", {}}};
  s.hardware_class = "cpu";
  s.queue_timeout_ms = 5;
  s.run_timeout_ms = 7;
  s.use_cache = false;
  return s;
}

TEST(Protocol, SubmitRoundTrip) {
  SubmitMsg s = SampleSubmit();
  auto d = DecodeSubmit(Encode(s));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->job_id, "job-1");
  EXPECT_EQ(d->campaign, "camp");
  EXPECT_EQ(d->module_text, "HloModule m");
  EXPECT_EQ(d->module_hash, s.module_hash);
  EXPECT_EQ(d->decisions, s.decisions);
  EXPECT_EQ(d->queue_timeout_ms, 5u);
  EXPECT_EQ(d->run_timeout_ms, 7u);
  EXPECT_FALSE(d->use_cache);
}

TEST(Protocol, DecisionsAreLittleEndianInt32Bins) {
  // Hand-built: {"id": "j", "module_hash": "h", "pipeline": "p", "decisions": {"a#0": bin}}
  std::string body;
  body += char(0x84);
  body += "\xa2id\xa1j";
  body += "\xabmodule_hash\xa1h";
  body += "\xa8pipeline\xa1p";
  body += "\xa9" "decisions";
  body += char(0x81);
  body += "\xa3" "a#0";
  body += std::string("\xc4\x08", 2);
  body += std::string("\x01\x00\x00\x00\xfe\xff\xff\xff", 8);  // 1, -2
  auto d = DecodeSubmit(body);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->decisions.at("a#0"), (DecisionVector{1, -2}));
  EXPECT_TRUE(d->use_cache);  // optional key default
  // Wrong length (not a multiple of 4) is refused.
  std::string bad = body;
  bad[bad.size() - 9] = 7;
  bad.pop_back();
  EXPECT_FALSE(DecodeSubmit(bad).ok());
}

TEST(Protocol, RefusesTrailingBytesMissingKeysWrongTypes) {
  std::string ok = Encode(SampleSubmit());
  EXPECT_FALSE(DecodeSubmit(ok + "x").ok());
  EXPECT_FALSE(DecodeSubmit(ok.substr(0, ok.size() - 1)).ok());
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_map(2);
  pk.pack(std::string("id"));
  pk.pack(std::string("x"));
  pk.pack(std::string("pipeline"));
  pk.pack(std::string("p"));  // module_hash missing
  auto d = DecodeSubmit(std::string(buf.data(), buf.size()));
  ASSERT_FALSE(d.ok());
  EXPECT_NE(std::string(d.status().message()).find("module_hash"), std::string::npos);
  msgpack::sbuffer b2;
  msgpack::packer<msgpack::sbuffer> p2(b2);
  p2.pack_map(3);
  p2.pack(std::string("id"));
  p2.pack(42);  // wrong type
  p2.pack(std::string("module_hash"));
  p2.pack(std::string("h"));
  p2.pack(std::string("pipeline"));
  p2.pack(std::string("p"));
  EXPECT_FALSE(DecodeSubmit(std::string(b2.data(), b2.size())).ok());
}

TEST(Protocol, HugeDeclaredLengthsAreRefusedCheaply) {
  // array32 / map32 / str32 / bin32 declaring ~4G elements in 5 bytes.
  for (char tag : {'\xdd', '\xdf', '\xdb', '\xc6'}) {
    std::string b = std::string(1, tag) + std::string("\xff\xff\xff\xff", 4);
    auto d = DecodeSubmit(b);
    EXPECT_FALSE(d.ok());
  }
  // Deep nesting.
  std::string deep(100, '\x91');
  deep += '\x01';
  EXPECT_FALSE(DecodeSubmit(deep).ok());
}

TEST(Protocol, RandomBytesNeverCrash) {
  std::mt19937 rng(7);
  std::string good = Encode(SampleSubmit());
  int refused = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string b;
    if (i % 2) {
      b.resize(rng() % 64);
      for (char& c : b) c = static_cast<char>(rng());
    } else {
      b = good;
      for (int k = 0; k < 3; ++k) b[rng() % b.size()] = static_cast<char>(rng());
      b.resize(rng() % (b.size() + 1));
    }
    refused += !DecodeSubmit(b).ok();
    (void)DecodeDone(b);
    (void)DecodeRecord(b);
  }
  EXPECT_GT(refused, 15000);
}

// Decoding reuses one zone per thread: a decode after a refused one, a decode inside another
// (a scope opened while one is open) and a large module text all read back exactly, and the
// strings of an unpacked message refer into its bytes.
TEST(Protocol, UnpackScopesReuseTheThreadsZoneAndNest) {
  SubmitMsg big = SampleSubmit();
  big.module_text = std::string(100000, 'x');  // larger than the zone's first chunk
  const std::string big_bytes = Encode(big);
  const std::string ok = Encode(SampleSubmit());
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(DecodeSubmit(ok + "x").ok());
    auto d = DecodeSubmit(i == 1 ? big_bytes : ok);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->module_text, i == 1 ? big.module_text : "HloModule m");
  }
  UnpackScope outer;
  auto root = outer.Unpack(ok);
  ASSERT_TRUE(root.ok()) << root.status();
  auto inner = DecodeSubmit(big_bytes);  // opens its own scope while `outer` holds the zone
  ASSERT_TRUE(inner.ok()) << inner.status();
  EXPECT_EQ(inner->module_text.size(), 100000u);
  auto m = MapView::Of(**root);
  ASSERT_TRUE(m.ok());
  const msgpack::object* id = m->Find("id");
  ASSERT_NE(id, nullptr);
  ASSERT_EQ(id->type, msgpack::type::STR);
  EXPECT_EQ(std::string_view(id->via.str.ptr, id->via.str.size), "job-1");
  EXPECT_GE(id->via.str.ptr, ok.data());  // not copied: it points into the message's bytes
  EXPECT_LT(id->via.str.ptr, ok.data() + ok.size());
}

TEST(Protocol, HeaderChecks) {
  EXPECT_EQ(*ParseHeader(MakeHeader(Command::kSubmit)), Command::kSubmit);
  EXPECT_FALSE(ParseHeader("HX").ok());
  EXPECT_FALSE(ParseHeader(std::string("HX\x02S", 4)).ok());  // other version
  EXPECT_FALSE(ParseHeader(std::string("HX\x01?", 4)).ok());  // unknown command
}

TEST(Protocol, RecordRoundTrip) {
  ResultRecord r;
  r.status = JobStatus::kWrongOutput;
  r.message = "mismatch";
  r.module_hash = "abc";
  r.pipeline = "default";
  r.cost.median = 1.5e-3;
  r.cost.samples = {1e-3, 2e-3};
  r.cost.calls_per_sample = 4;
  r.analytical.op_count = 12;
  r.analytical.flops = 3e6;
  r.provenance.host = "h";
  r.provenance.cpu = "AMD EPYC 7B13";
  r.provenance.isa = "avx512";
  r.provenance.hardware_class = "cpu-avx512";
  r.provenance.cores = 2;
  r.provenance.seed = 99;
  r.mismatch = Mismatch{1, 2, 3.0, 4.5, "d"};
  r.instruction_count = 7;
  r.eval_seconds = 0.25;
  auto d = DecodeRecord(EncodeRecord(r));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->status, JobStatus::kWrongOutput);
  EXPECT_EQ(d->message, "mismatch");
  EXPECT_DOUBLE_EQ(d->cost.median, 1.5e-3);
  EXPECT_EQ(d->cost.samples, r.cost.samples);
  EXPECT_EQ(d->cost.calls_per_sample, 4);
  EXPECT_EQ(d->analytical.op_count, 12);
  EXPECT_EQ(d->provenance.seed, 99u);
  EXPECT_EQ(d->provenance.cpu, "AMD EPYC 7B13");
  EXPECT_EQ(d->provenance.isa, "avx512");
  EXPECT_EQ(d->provenance.hardware_class, "cpu-avx512");
  ASSERT_TRUE(d->mismatch.has_value());
  EXPECT_DOUBLE_EQ(d->mismatch->actual, 4.5);
  EXPECT_EQ(d->instruction_count, 7);
}

// READY carries the worker's CPU model and ISA level; a READY from a worker that predates them
// still registers, with both empty.
TEST(Protocol, ReadyCarriesCpuAndIsa) {
  ReadyMsg r;
  r.worker_id = "w1";
  r.host = "h";
  r.hardware_class = "cpu-avx2";
  r.version = "0.1.0";
  r.cores = 8;
  r.threads = 2;
  r.credit = 3;
  r.cpu = "Intel(R) Xeon(R) Platinum 8480+";
  r.isa = "avx2";
  auto d = DecodeReady(Encode(r));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->worker_id, "w1");
  EXPECT_EQ(d->hardware_class, "cpu-avx2");
  EXPECT_EQ(d->credit, 3u);
  EXPECT_EQ(d->cpu, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(d->isa, "avx2");

  msgpack::sbuffer old;
  msgpack::packer<msgpack::sbuffer> pk(old);
  pk.pack_map(3);
  pk.pack(std::string("worker_id"));
  pk.pack(std::string("w0"));
  pk.pack(std::string("class"));
  pk.pack(std::string("cpu"));
  pk.pack(std::string("credit"));
  pk.pack(1);
  auto o = DecodeReady(std::string(old.data(), old.size()));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->hardware_class, "cpu");
  EXPECT_EQ(o->cpu, "");
  EXPECT_EQ(o->isa, "");

  r.isa = std::string(kMaxNameBytes + 1, 'x');
  EXPECT_FALSE(DecodeReady(Encode(r)).ok()) << "isa is bounded like every name";
}

// The cost's interference totals and host-speed normalization travel in the record when
// measured, and are absent (zero, no reference) otherwise: records from older workers decode.
TEST(Protocol, RecordCarriesNormalizedCost) {
  ResultRecord r;
  r.cost.median = 2e-3;
  r.cost.samples = {2e-3, 2.2e-3, 1.9e-3};
  r.cost.steal_seconds = 1.5e-4;
  r.cost.run_wait_seconds = 2.5e-4;
  r.cost.sampled_seconds = 0.125;
  r.cost.reference = "mix";
  r.cost.reference_quiet_compute = 8e-5;
  r.cost.reference_quiet_memory = 4e-4;
  r.cost.reference_slowdown = 1.25;
  r.cost.normalized_median = 1.6e-3;
  r.cost.normalized_mad = 3e-5;
  r.cost.normalized_ci_low = 1.55e-3;
  r.cost.normalized_ci_high = 1.7e-3;
  r.cost.reference_compute = {9e-5, 1e-4, 1.1e-4};
  r.cost.reference_memory = {4.1e-4, 5e-4, 4.5e-4};
  auto d = DecodeRecord(EncodeRecord(r));
  ASSERT_TRUE(d.ok()) << d.status();
  const CostDistribution& c = d->cost;
  EXPECT_EQ(c.steal_seconds, 1.5e-4);
  EXPECT_EQ(c.run_wait_seconds, 2.5e-4);
  EXPECT_EQ(c.sampled_seconds, 0.125);
  EXPECT_EQ(c.reference, "mix");
  EXPECT_EQ(c.reference_quiet_compute, 8e-5);
  EXPECT_EQ(c.reference_quiet_memory, 4e-4);
  EXPECT_EQ(c.reference_slowdown, 1.25);
  EXPECT_EQ(c.normalized_median, 1.6e-3);
  EXPECT_EQ(c.normalized_mad, 3e-5);
  EXPECT_EQ(c.normalized_ci_low, 1.55e-3);
  EXPECT_EQ(c.normalized_ci_high, 1.7e-3);
  EXPECT_EQ(c.reference_compute, r.cost.reference_compute);
  EXPECT_EQ(c.reference_memory, r.cost.reference_memory);
  EXPECT_EQ(c.samples, r.cost.samples);

  ResultRecord plain;
  plain.cost.median = 1e-3;
  const std::string bytes = EncodeRecord(plain);
  EXPECT_EQ(bytes.find("normalized_median"), std::string::npos);
  EXPECT_EQ(bytes.find("steal_seconds"), std::string::npos);
  auto p = DecodeRecord(bytes);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->cost.reference.empty());
  EXPECT_EQ(p->cost.normalized_median, 0);
  EXPECT_EQ(p->cost.sampled_seconds, 0);
  EXPECT_TRUE(p->cost.reference_compute.empty());
}

TEST(Protocol, PeekJobIdNamesTheJobOfABadSubmit) {
  auto body = [](auto id) {
    msgpack::sbuffer b;
    msgpack::packer<msgpack::sbuffer> pk(b);
    pk.pack_map(2);
    pk.pack(std::string("id"));
    pk.pack(id);
    pk.pack(std::string("module_hash"));
    pk.pack(5);  // not a string: the SUBMIT does not decode
    return std::string(b.data(), b.size());
  };
  ASSERT_FALSE(DecodeSubmit(body(std::string("job-9"))).ok());
  EXPECT_EQ(PeekJobId(body(std::string("job-9"))), "job-9");
  EXPECT_EQ(PeekJobId(body(7)), "");
  EXPECT_EQ(PeekJobId("\x01\x02"), "");
  EXPECT_EQ(PeekJobId(Encode(SampleSubmit())), "job-1");
}

TEST(Protocol, KindTravelsInSubmitAndJob) {
  SubmitMsg s = SampleSubmit();
  std::string evaluate = Encode(s);
  EXPECT_EQ(evaluate.find("kind"), std::string::npos);  // the default is not sent
  auto d = DecodeSubmit(evaluate);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->kind, kKindEvaluate);
  s.kind = kKindSites;
  d = DecodeSubmit(Encode(s));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->kind, kKindSites);
  JobMsg j{"job-2", 3, "h", "", "default", {{"fusion#0", {1}}}, 500, kKindSites, {}};
  auto dj = DecodeJob(Encode(j));
  ASSERT_TRUE(dj.ok()) << dj.status();
  EXPECT_EQ(dj->kind, kKindSites);
  EXPECT_EQ(dj->decisions, j.decisions);
  j.kind = kKindEvaluate;
  dj = DecodeJob(Encode(j));
  ASSERT_TRUE(dj.ok()) << dj.status();
  EXPECT_EQ(dj->kind, kKindEvaluate);
  // An unknown kind is a decode error that still names the job; so is a kind of another type.
  s.kind = "paired-with-nothing";
  auto bad = DecodeSubmit(Encode(s));
  ASSERT_FALSE(bad.ok());
  EXPECT_STREQ(ErrorCodeFor(bad.status()), kErrDecode);
  EXPECT_NE(bad.status().message().find("paired-with-nothing"), std::string::npos);
  EXPECT_EQ(PeekJobId(Encode(s)), "job-1");
  EXPECT_TRUE(IsKnownKind(kKindEvaluate) && IsKnownKind(kKindSites) && !IsKnownKind(""));
}

TEST(Protocol, RecordCarriesSites) {
  ResultRecord r;
  r.pipeline = "default";
  EXPECT_EQ(EncodeRecord(r).find("sites"), std::string::npos);  // absent unless a sites job
  r.sites = R"([{"key":"fusion#0","pass":"fusion","decided":false,"sites":[]}])";
  auto d = DecodeRecord(EncodeRecord(r));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->sites, r.sites);
  r.sites.assign(kMaxSitesBytes + 1, ' ');
  d = DecodeRecord(EncodeRecord(r));
  ASSERT_FALSE(d.ok());
  EXPECT_STREQ(ErrorCodeFor(d.status()), kErrLimit);
}

TEST(Protocol, CacheKeyAndAddresses) {
  PipelineDecisions a = {{"s#0", {1, 0}}}, b = {{"s#0", {0, 1}}};
  EXPECT_EQ(CacheKey("h", "p", a, "cpu"), CacheKey("h", "p", a, "cpu"));
  EXPECT_NE(CacheKey("h", "p", a, "cpu"), CacheKey("h", "p", b, "cpu"));
  EXPECT_NE(CacheKey("h", "p", a, "cpu"), CacheKey("h", "p", a, "gpu"));
  // Kinds never share an answer; an evaluation's key is the one it had before kinds existed.
  SubmitMsg job;
  job.module_hash = "h";
  job.pipeline = "p";
  job.decisions = a;
  EXPECT_EQ(CacheKey("h", "p", a, "cpu"), CacheKey(job, "cpu"));
  job.kind = kKindSites;
  EXPECT_NE(CacheKey("h", "p", a, "cpu"), CacheKey(job, "cpu"));
  // The vectors docs/PROTOCOL.md "Hashes" gives (computed by python/hlox/client.py's own
  // implementation of the algorithm the document defines).
  EXPECT_EQ(TextHash(""), "c3817c016ba4ff304812d590de40035d");
  EXPECT_EQ(TextHash("x"), "338262d8f096398fc20dbe8060fbb8d6");
  EXPECT_EQ(TextHash("HloModule m"), "145c74cae6ab3b626b88ce8ca48a1159");
  EXPECT_EQ(ControlAddressFor("tcp://127.0.0.1:5555"), "tcp://127.0.0.1:5556");
  EXPECT_EQ(ControlAddressFor("ipc:///tmp/b"), "ipc:///tmp/b.ctl");
  EXPECT_EQ(ControlAddressFor("udp://x"), "");
}

}  // namespace
}  // namespace hlox::proto
