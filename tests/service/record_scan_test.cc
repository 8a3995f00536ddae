// The broker's bounded scan of DONE bodies and result records (protocol/record_scan.h) against the
// full decoders it replaces: the same records accepted and refused (hand-built wrong types, nil
// values, duplicate and unknown keys, huge declared lengths, deep nesting, and tens of thousands
// of randomly mutated or truncated encodings), and the same fields read.
#include <random>

#include "gtest/gtest.h"
#include "msgpack.hpp"
#include "protocol/protocol.h"
#include "protocol/record_scan.h"

namespace hlox::proto {
namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;

ResultRecord SampleRecord(bool mismatch) {
  ResultRecord r;
  r.status = mismatch ? JobStatus::kWrongOutput : JobStatus::kOk;
  r.message = "m";
  r.module_hash = "0123456789abcdef0123456789abcdef";
  r.pipeline = "default";
  r.cost.median = 2.5e-3;
  r.cost.mad = 1e-4;
  r.cost.samples = {2.4e-3, 2.5e-3, 2.7e-3};
  r.cost.calls_per_sample = 3;
  r.analytical.op_count = 9;
  r.provenance.host = "h";
  r.provenance.isa = "avx2";
  r.provenance.seed = 5;
  if (mismatch) {
    r.mismatch = Mismatch{0, 3, 1.0, 2.0, "x"};
    // The optional cost keys (interference totals, host-speed normalization) ride along.
    r.cost.sampled_seconds = 0.05;
    r.cost.reference = "compute";
    r.cost.normalized_median = 2.1e-3;
    r.cost.reference_compute = {8e-5, 9e-5, 8.5e-5};
  }
  r.instruction_count = 11;
  r.eval_seconds = 0.01;
  return r;
}

std::string Bytes(const msgpack::sbuffer& b) { return std::string(b.data(), b.size()); }
void Str(Packer& pk, std::string_view s) {
  pk.pack_str(uint32_t(s.size()));
  pk.pack_str_body(s.data(), uint32_t(s.size()));
}

// A record map whose `key` holds what `value` packs (after the required fields), plus `extra`
// raw bytes appended as further pairs (count `extra_pairs`).
template <typename Fn>
std::string RecordWith(std::string_view key, Fn value) {
  msgpack::sbuffer b;
  Packer pk(b);
  pk.pack_map(5);
  Str(pk, key);
  value(pk);
  Str(pk, "status"); Str(pk, "OK");
  Str(pk, "cost"); pk.pack_map(1); Str(pk, "median"); pk.pack(1.0);
  Str(pk, "analytical"); pk.pack_map(0);
  Str(pk, "provenance"); pk.pack_map(0);
  return Bytes(b);
}

// Both decoders agree on `b`: the same acceptance, and when accepted the same fields.
void ExpectAgree(const std::string& b, const char* what) {
  absl::StatusOr<ResultRecord> full = DecodeRecord(b);
  absl::StatusOr<RecordSummary> scan = ScanRecord(b);
  ASSERT_EQ(full.ok(), scan.ok()) << what << ": full " << full.status() << " scan "
                                  << scan.status();
  if (full.ok()) {
    EXPECT_EQ(scan->status, full->status) << what;
    EXPECT_EQ(scan->median, full->cost.median) << what;
    EXPECT_EQ(scan->mad, full->cost.mad) << what;
    EXPECT_EQ(scan->samples, full->cost.samples.size()) << what;
  }
  absl::StatusOr<DoneMsg> dfull = DecodeDone(b);
  absl::StatusOr<DoneView> dscan = ScanDone(b);
  ASSERT_EQ(dfull.ok(), dscan.ok()) << what << ": full " << dfull.status() << " scan "
                                    << dscan.status();
  if (dfull.ok()) {
    EXPECT_EQ(dscan->job_id, dfull->job_id);
    EXPECT_EQ(dscan->attempt, dfull->attempt);
    EXPECT_EQ(dscan->crashed, dfull->crashed);
    EXPECT_EQ(dscan->record, dfull->record);
  }
}

TEST(RecordScan, ReadsWhatTheFullDecoderReads) {
  for (bool mm : {false, true}) {
    ResultRecord r = SampleRecord(mm);
    std::string bytes = EncodeRecord(r);
    auto s = ScanRecord(bytes);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->status, r.status);
    EXPECT_DOUBLE_EQ(s->median, 2.5e-3);
    EXPECT_DOUBLE_EQ(s->mad, 1e-4);
    EXPECT_EQ(s->samples, 3u);
    std::string done = Encode(DoneMsg{"job-7", 4, true, bytes});
    auto d = ScanDone(done);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->job_id, "job-7");
    EXPECT_EQ(d->attempt, 4u);
    EXPECT_TRUE(d->crashed);
    EXPECT_EQ(d->record, bytes);  // the bytes as sent, not a re-encoding
    ExpectAgree(bytes, "sample");
    ExpectAgree(done, "done");
  }
}

TEST(RecordScan, AcceptsASitesJobsRecordWithinItsLimit) {
  ResultRecord r = SampleRecord(false);
  r.sites = std::string(proto::kMaxTextBytes + 10, 'x');  // over the message limit, under sites'
  auto s = ScanRecord(EncodeRecord(r));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->status, r.status);
  ExpectAgree(EncodeRecord(r), "sites");
  r.sites.assign(kMaxSitesBytes + 1, 'x');
  s = ScanRecord(EncodeRecord(r));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted);
  ExpectAgree(EncodeRecord(r), "sites over the limit");
}

TEST(RecordScan, HandBuiltCasesAgree) {
  ExpectAgree(RecordWith("message", [](Packer& pk) { pk.pack(3); }), "message int");
  ExpectAgree(RecordWith("message", [](Packer& pk) { pk.pack_nil(); }), "message nil");
  ExpectAgree(RecordWith("eval_seconds", [](Packer& pk) { pk.pack(-3); }), "negative int as f64");
  ExpectAgree(RecordWith("eval_seconds", [](Packer& pk) { Str(pk, "x"); }), "f64 as str");
  // The optional cost keys, wrong types included, are checked alike.
  auto cost_with = [](std::string_view key, auto value) {
    msgpack::sbuffer b;
    Packer pk(b);
    pk.pack_map(4);
    Str(pk, "status"); Str(pk, "OK");
    Str(pk, "cost"); pk.pack_map(2); Str(pk, "median"); pk.pack(1.0); Str(pk, key); value(pk);
    Str(pk, "analytical"); pk.pack_map(0);
    Str(pk, "provenance"); pk.pack_map(0);
    return Bytes(b);
  };
  ExpectAgree(cost_with("normalized_median", [](Packer& pk) { pk.pack(1e-3); }), "norm f64");
  ExpectAgree(cost_with("normalized_mad", [](Packer& pk) { Str(pk, "x"); }), "norm as str");
  ExpectAgree(cost_with("reference", [](Packer& pk) { pk.pack(3); }), "reference int");
  ExpectAgree(cost_with("reference", [](Packer& pk) { Str(pk, std::string(300, 'r')); }),
              "reference too long");
  ExpectAgree(cost_with("reference_memory", [](Packer& pk) { pk.pack(1.0); }), "ref not array");
  ExpectAgree(cost_with("reference_compute", [](Packer& pk) {
    pk.pack_array(2); pk.pack(1.0); pk.pack(2);
  }), "ref entry int");
  ExpectAgree(cost_with("reference_compute", [](Packer& pk) {
    pk.pack_array(2); pk.pack(1.0); pk.pack(2.0);
  }), "ref array");
  EXPECT_FALSE(ScanRecord(cost_with("steal_seconds", [](Packer& pk) { pk.pack(true); })).ok());
  // The provenance's ISA level is a bounded string to both.
  auto isa_with = [](auto value) {
    msgpack::sbuffer b;
    Packer pk(b);
    pk.pack_map(4);
    Str(pk, "status"); Str(pk, "OK");
    Str(pk, "cost"); pk.pack_map(1); Str(pk, "median"); pk.pack(1.0);
    Str(pk, "analytical"); pk.pack_map(0);
    Str(pk, "provenance"); pk.pack_map(1); Str(pk, "isa"); value(pk);
    return Bytes(b);
  };
  ExpectAgree(isa_with([](Packer& pk) { Str(pk, "avx2"); }), "isa");
  ExpectAgree(isa_with([](Packer& pk) { pk.pack(2); }), "isa int");
  ExpectAgree(isa_with([](Packer& pk) { Str(pk, std::string(300, 'i')); }), "isa too long");
  EXPECT_TRUE(ScanRecord(isa_with([](Packer& pk) { Str(pk, "avx2"); })).ok());
  EXPECT_FALSE(ScanRecord(isa_with([](Packer& pk) { pk.pack(2); })).ok());
  ExpectAgree(RecordWith("instruction_count", [](Packer& pk) { pk.pack(1.5); }), "i64 as float");
  ExpectAgree(RecordWith("instruction_count", [](Packer& pk) { pk.pack(int8_t(-2)); }), "int8");
  ExpectAgree(RecordWith("mismatch", [](Packer& pk) { pk.pack(1); }), "mismatch not a map");
  ExpectAgree(RecordWith("mismatch", [](Packer& pk) {
    pk.pack_map(1); Str(pk, "output"); Str(pk, "no");
  }), "mismatch.output str");
  ExpectAgree(RecordWith("unknown", [](Packer& pk) {
    pk.pack_array(2); pk.pack_map(1); pk.pack(1); pk.pack_array(0); pk.pack(2);
  }), "unknown nested");
  ExpectAgree(RecordWith("unknown", [](Packer& pk) {
    pk.pack_array(1); pk.pack_array(1); pk.pack_array(1); pk.pack_array(0);
  }), "too deep");
  ExpectAgree(RecordWith("status", [](Packer& pk) { Str(pk, "NOPE"); }), "first status wins");
  ExpectAgree(RecordWith("status", [](Packer& pk) { pk.pack_nil(); }), "nil status is missing");
  ExpectAgree(RecordWith("message", [](Packer& pk) {
    std::string big(kMaxTextBytes + 1, 'a');
    Str(pk, big);
  }), "message over the limit");
  // A missing required map, a samples entry that is not a float, the cost as an array.
  ExpectAgree(RecordWith("cost", [](Packer& pk) { pk.pack_nil(); }), "nil cost");
  ExpectAgree(RecordWith("cost", [](Packer& pk) {
    pk.pack_map(1); Str(pk, "samples"); pk.pack_array(2); pk.pack(1.0); pk.pack(2);
  }), "integer sample");
  ExpectAgree(RecordWith("cost", [](Packer& pk) { pk.pack_array(0); }), "cost array");
  // DONE bodies: attempt too large or negative, record as an int, missing crashed.
  auto done = [](auto fill) {
    msgpack::sbuffer b;
    Packer pk(b);
    fill(pk);
    return Bytes(b);
  };
  ExpectAgree(done([](Packer& pk) {
    pk.pack_map(4); Str(pk, "id"); Str(pk, "j"); Str(pk, "attempt"); pk.pack(uint64_t(1) << 33);
    Str(pk, "crashed"); pk.pack(false); Str(pk, "record"); Str(pk, "r");
  }), "attempt too large");
  ExpectAgree(done([](Packer& pk) {
    pk.pack_map(4); Str(pk, "id"); Str(pk, "j"); Str(pk, "attempt"); pk.pack(-1);
    Str(pk, "crashed"); pk.pack(false); Str(pk, "record"); Str(pk, "r");
  }), "negative attempt");
  ExpectAgree(done([](Packer& pk) {
    pk.pack_map(3); Str(pk, "id"); Str(pk, "j"); Str(pk, "attempt"); pk.pack(1);
    Str(pk, "record"); pk.pack(7);
  }), "record int, crashed missing");
}

TEST(RecordScan, HugeDeclaredLengthsAreRefusedWithoutAllocating) {
  const std::string cases[] = {
      std::string("\x81\xa6status\xdb\xff\xff\xff\xff", 12),      // str32 of 4 GiB
      std::string("\x81\xa4" "cost\xdf\xff\xff\xff\xff", 10),      // map32 of 4G pairs
      std::string("\x81\xa1x\xdd\x00\x00\xff\xff", 8),             // array of 65535, no bytes
      std::string("\xdf\x7f\xff\xff\xff", 5),                      // top map, no bytes
      std::string("\xc7\x05\x01", 3),                              // ext
      std::string("\xc1", 1),                                      // reserved byte
      std::string(),
  };
  for (const std::string& c : cases) {
    EXPECT_FALSE(ScanRecord(c).ok());
    EXPECT_FALSE(ScanDone(c).ok());
    ExpectAgree(c, "hostile");
  }
  std::string trailing = EncodeRecord(SampleRecord(false)) + "x";
  EXPECT_FALSE(ScanRecord(trailing).ok());
  ExpectAgree(trailing, "trailing byte");
}

TEST(RecordScan, MutatedAndTruncatedEncodingsAgree) {
  std::mt19937 rng(11);
  const std::string base[] = {EncodeRecord(SampleRecord(false)), EncodeRecord(SampleRecord(true)),
                              Encode(DoneMsg{"job-1", 2, false, "rec"})};
  int accepted = 0;
  for (int i = 0; i < 30000; ++i) {
    std::string b = base[i % 3];
    int flips = 1 + int(rng() % 3);
    for (int k = 0; k < flips; ++k) b[rng() % b.size()] = static_cast<char>(rng());
    if (rng() % 4 == 0) b.resize(rng() % (b.size() + 1));
    ExpectAgree(b, "mutated");
    if (::testing::Test::HasFatalFailure()) {
      ADD_FAILURE() << "case " << i;
      return;
    }
    accepted += ScanRecord(b).ok() || ScanDone(b).ok();
  }
  EXPECT_GT(accepted, 100);  // the mutations also produce valid records, not only refusals
}

}  // namespace
}  // namespace hlox::proto
