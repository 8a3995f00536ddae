// The `paired` job kind on the wire: SUBMIT/JOB round trips of its keys, the defaults and limits
// of its timing protocol, unknown kinds refused, evaluation encodings unchanged (no "kind" key,
// the same cache key), and the RECORD's `paired` map through the full decoder and the broker's
// bounded scan alike.
#include "gtest/gtest.h"
#include "msgpack.hpp"
#include "protocol/protocol.h"
#include "protocol/record_scan.h"

namespace hlox::proto {
namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;

SubmitMsg PairedSubmit() {
  SubmitMsg s;
  s.job_id = "verdict-1";
  s.campaign = "camp";
  s.module_text = "HloModule m";
  s.module_hash = TextHash(s.module_text);
  s.pipeline = "seq:simplify,cse,fusion:all";
  s.decisions = {{"fusion#0", {1, 0, 1}}};
  s.use_cache = false;
  s.kind = kKindPaired;
  s.paired.baseline_pipeline = "default";
  s.paired.baseline_decisions = {{"fusion#0", {0, 0, 0}}};
  s.paired.seed = 0xfeedbeefcafe;
  s.paired.protocol.warmups = 1;
  s.paired.protocol.min_samples = 3;
  s.paired.protocol.max_samples = 40;
  s.paired.protocol.target_rel_error = 0;
  s.paired.protocol.time_cap_seconds = 0.125;
  s.paired.protocol.min_sample_seconds = 2e-3;
  s.paired.protocol.paired_instances = 4;
  return s;
}

void ExpectSamePaired(const PairedSpec& a, const PairedSpec& b) {
  EXPECT_EQ(a.baseline_pipeline, b.baseline_pipeline);
  EXPECT_EQ(a.baseline_decisions, b.baseline_decisions);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.protocol.warmups, b.protocol.warmups);
  EXPECT_EQ(a.protocol.min_samples, b.protocol.min_samples);
  EXPECT_EQ(a.protocol.max_samples, b.protocol.max_samples);
  EXPECT_DOUBLE_EQ(a.protocol.target_rel_error, b.protocol.target_rel_error);
  EXPECT_DOUBLE_EQ(a.protocol.time_cap_seconds, b.protocol.time_cap_seconds);
  EXPECT_DOUBLE_EQ(a.protocol.min_sample_seconds, b.protocol.min_sample_seconds);
  EXPECT_EQ(a.protocol.paired_instances, b.protocol.paired_instances);
}

// A SUBMIT body of the required keys plus "kind": `kind` and `extra` packed pairs.
template <typename Fn>
std::string SubmitWith(uint32_t extra_pairs, Fn extra) {
  msgpack::sbuffer b;
  Packer pk(b);
  pk.pack_map(3 + extra_pairs);
  pk.pack(std::string("id")); pk.pack(std::string("j-7"));
  pk.pack(std::string("module_hash")); pk.pack(std::string("h"));
  pk.pack(std::string("pipeline")); pk.pack(std::string("default"));
  extra(pk);
  return std::string(b.data(), b.size());
}

TEST(PairedKind, SubmitAndJobRoundTrip) {
  const SubmitMsg s = PairedSubmit();
  auto d = DecodeSubmit(Encode(s));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->kind, "paired");
  EXPECT_EQ(d->pipeline, s.pipeline);
  EXPECT_EQ(d->decisions, s.decisions);
  EXPECT_FALSE(d->use_cache);
  ExpectSamePaired(d->paired, s.paired);
  JobMsg j{"verdict-1", 2, s.module_hash, "", s.pipeline, s.decisions, 9000, s.kind, s.paired};
  auto dj = DecodeJob(Encode(j));
  ASSERT_TRUE(dj.ok()) << dj.status();
  EXPECT_EQ(dj->kind, "paired");
  EXPECT_EQ(dj->run_timeout_ms, 9000u);
  ExpectSamePaired(dj->paired, s.paired);
}

TEST(PairedKind, EvaluationsKeepTheirEncodingAndCacheKey) {
  SubmitMsg s = PairedSubmit();
  s.kind = kKindEvaluate;
  const std::string body = Encode(s);
  EXPECT_EQ(body.find("kind"), std::string::npos) << "an evaluation carries no kind key";
  EXPECT_EQ(body.find("baseline_pipeline"), std::string::npos);
  auto d = DecodeSubmit(body);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->kind, "evaluate");
  // Stored cache keys of evaluations stay valid; a paired twin never shares them, nor do two
  // paired jobs that differ only in their baseline or seed.
  EXPECT_EQ(CacheKey(s, "cpu-avx2"), CacheKey(s.module_hash, s.pipeline, s.decisions, "cpu-avx2"));
  SubmitMsg p = PairedSubmit();
  EXPECT_NE(CacheKey(p, "cpu-avx2"), CacheKey(s, "cpu-avx2"));
  SubmitMsg p2 = p;
  p2.paired.seed += 1;
  EXPECT_NE(CacheKey(p, "cpu-avx2"), CacheKey(p2, "cpu-avx2"));
  p2 = p;
  p2.paired.baseline_decisions.clear();
  EXPECT_NE(CacheKey(p, "cpu-avx2"), CacheKey(p2, "cpu-avx2"));
  EXPECT_EQ(CacheKey(p, "cpu-avx2"), CacheKey(PairedSubmit(), "cpu-avx2"));
  EXPECT_TRUE(KindCacheable(kKindEvaluate));
  EXPECT_FALSE(KindCacheable(kKindPaired));
}

TEST(PairedKind, AbsentProtocolKeysTakeTheDefaults) {
  auto d = DecodeSubmit(SubmitWith(1, [](Packer& pk) {
    pk.pack(std::string("kind")); pk.pack(std::string("paired"));
  }));
  ASSERT_TRUE(d.ok()) << d.status();
  const TimingProtocol def;
  EXPECT_EQ(d->paired.baseline_pipeline, "");  // the job's own pipeline
  EXPECT_TRUE(d->paired.baseline_decisions.empty());
  EXPECT_EQ(d->paired.protocol.warmups, def.warmups);
  EXPECT_EQ(d->paired.protocol.min_samples, def.min_samples);
  EXPECT_EQ(d->paired.protocol.max_samples, def.max_samples);
  EXPECT_DOUBLE_EQ(d->paired.protocol.time_cap_seconds, def.time_cap_seconds);
  EXPECT_EQ(d->paired.protocol.paired_instances, def.paired_instances);
}

TEST(PairedKind, UnknownKindsAndBadFieldsAreRefused) {
  SubmitMsg s = PairedSubmit();
  s.kind = "transmogrify";
  auto d = DecodeSubmit(Encode(s));
  ASSERT_FALSE(d.ok());
  EXPECT_STREQ(ErrorCodeFor(d.status()), kErrDecode);
  EXPECT_NE(d.status().message().find("transmogrify"), std::string::npos);
  EXPECT_EQ(PeekJobId(Encode(s)), "verdict-1");  // the ERROR names the job
  JobMsg j;
  j.job_id = "x";
  j.module_hash = "h";
  j.pipeline = "default";
  j.kind = "transmogrify";
  EXPECT_FALSE(DecodeJob(Encode(j)).ok());
  // Wrong types and values out of range, each on its own.
  auto bad = [](const char* key, auto value) {
    return SubmitWith(2, [&](Packer& pk) {
      pk.pack(std::string("kind")); pk.pack(std::string("paired"));
      pk.pack(std::string(key)); pk.pack(value);
    });
  };
  EXPECT_FALSE(DecodeSubmit(SubmitWith(1, [](Packer& pk) {
                 pk.pack(std::string("kind")); pk.pack(3);
               })).ok());
  EXPECT_FALSE(DecodeSubmit(bad("max_rounds", 0)).ok());
  EXPECT_FALSE(DecodeSubmit(bad("max_rounds", uint64_t{1} << 20)).ok());
  EXPECT_FALSE(DecodeSubmit(bad("min_rounds", 500)).ok());  // above the default max_rounds
  EXPECT_FALSE(DecodeSubmit(bad("instances", 0)).ok());
  EXPECT_FALSE(DecodeSubmit(bad("instances", 65)).ok());
  EXPECT_FALSE(DecodeSubmit(bad("time_cap_ms", 3600000)).ok());
  EXPECT_FALSE(DecodeSubmit(bad("target_rel_error", -0.5)).ok());
  EXPECT_FALSE(DecodeSubmit(bad("seed", std::string("x"))).ok());
  EXPECT_FALSE(DecodeSubmit(bad("baseline_pipeline", 7)).ok());
  EXPECT_FALSE(DecodeSubmit(bad("baseline_decisions", std::string("x"))).ok());
  EXPECT_TRUE(DecodeSubmit(bad("instances", 64)).ok());
  EXPECT_TRUE(DecodeSubmit(bad("time_cap_ms", 600000)).ok());
}

TEST(PairedKind, PipelinesUpToTheirOwnLimit) {
  SubmitMsg s = PairedSubmit();
  s.pipeline = "seq:" + std::string(kMaxPipelineBytes - 4, 'a');
  EXPECT_TRUE(DecodeSubmit(Encode(s)).ok());
  s.pipeline += "a";
  auto d = DecodeSubmit(Encode(s));
  ASSERT_FALSE(d.ok());
  EXPECT_STREQ(ErrorCodeFor(d.status()), kErrLimit);
}

ResultRecord PairedRecord() {
  ResultRecord r;
  r.status = JobStatus::kOk;
  r.pipeline = "seq:cse";
  r.provenance.worker_id = "w1";
  r.provenance.hardware_class = "cpu-avx2";
  PairedFigures f;
  f.ratio = 0.91;
  f.ci_low = 0.88;
  f.ci_high = 0.95;
  f.unstable = true;
  f.instance_count = 4;
  f.calls_per_sample = 17;
  f.rounds = 3;
  f.ratios = {0.9, 0.91, 0.93};
  f.baseline_median = 2e-4;
  f.candidate_median = 1.8e-4;
  r.paired = f;
  return r;
}

TEST(PairedKind, RecordCarriesThePairedFigures) {
  const ResultRecord r = PairedRecord();
  const std::string bytes = EncodeRecord(r);
  auto d = DecodeRecord(bytes);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_TRUE(d->paired.has_value());
  EXPECT_DOUBLE_EQ(d->paired->ratio, 0.91);
  EXPECT_DOUBLE_EQ(d->paired->ci_low, 0.88);
  EXPECT_DOUBLE_EQ(d->paired->ci_high, 0.95);
  EXPECT_TRUE(d->paired->unstable);
  EXPECT_EQ(d->paired->instance_count, 4);
  EXPECT_EQ(d->paired->calls_per_sample, 17);
  EXPECT_EQ(d->paired->rounds, 3);
  EXPECT_EQ(d->paired->ratios, r.paired->ratios);
  EXPECT_DOUBLE_EQ(d->paired->baseline_median, 2e-4);
  EXPECT_DOUBLE_EQ(d->paired->candidate_median, 1.8e-4);
  EXPECT_EQ(d->provenance.worker_id, "w1");
  // An evaluation's record has no paired map.
  ResultRecord plain = r;
  plain.paired.reset();
  EXPECT_EQ(EncodeRecord(plain).find("paired"), std::string::npos);
  EXPECT_FALSE(DecodeRecord(EncodeRecord(plain))->paired.has_value());
  // The broker's bounded scan accepts it and reads the cost's figures, not the pair's.
  auto s = ScanRecord(bytes);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->status, JobStatus::kOk);
  EXPECT_EQ(s->samples, 0u);
  EXPECT_DOUBLE_EQ(s->median, 0);
}

TEST(PairedKind, ScanAndDecoderAgreeOnBadPairedMaps) {
  // A record whose "paired" holds what `value` packs: both decoders accept or refuse it alike.
  auto with = [](auto value) {
    msgpack::sbuffer b;
    Packer pk(b);
    pk.pack_map(5);
    pk.pack(std::string("paired"));
    value(pk);
    pk.pack(std::string("status")); pk.pack(std::string("OK"));
    pk.pack(std::string("cost")); pk.pack_map(0);
    pk.pack(std::string("analytical")); pk.pack_map(0);
    pk.pack(std::string("provenance")); pk.pack_map(0);
    return std::string(b.data(), b.size());
  };
  const std::string cases[] = {
      with([](Packer& pk) { pk.pack(3); }),                                        // not a map
      with([](Packer& pk) { pk.pack_map(1); pk.pack(std::string("ratios")); pk.pack(1.0); }),
      with([](Packer& pk) {
        pk.pack_map(1); pk.pack(std::string("ratios")); pk.pack_array(1); pk.pack(std::string("x"));
      }),
      with([](Packer& pk) { pk.pack_map(1); pk.pack(std::string("ratio")); pk.pack(std::string("x")); }),
      with([](Packer& pk) { pk.pack_map(1); pk.pack(std::string("unstable")); pk.pack(1); }),
      with([](Packer& pk) { pk.pack_map(1); pk.pack(std::string("rounds")); pk.pack(0.5); }),
      with([](Packer& pk) { pk.pack_map(1); pk.pack(std::string("future_key")); pk.pack(1); }),  // ok
      with([](Packer& pk) { pk.pack_map(0); }),                                                 // ok
  };
  int accepted = 0;
  for (const std::string& c : cases) {
    auto full = DecodeRecord(c);
    auto scan = ScanRecord(c);
    EXPECT_EQ(full.ok(), scan.ok()) << "full " << full.status() << " scan " << scan.status();
    accepted += full.ok();
  }
  EXPECT_EQ(accepted, 2);
}

}  // namespace
}  // namespace hlox::proto
