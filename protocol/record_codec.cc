// ResultRecord <-> msgpack (the RECORD layout of docs/PROTOCOL.md), status names, the module
// content hash and the result-cache key.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "cost/module_hash.h"
#include "protocol/msgpack_view.h"
#include "protocol/protocol.h"

namespace hlox::proto {
namespace {

using Packer = WirePacker;

void KV(Packer& pk, std::string_view k, std::string_view v) { PackStr(pk, k); PackStr(pk, v); }
void KI(Packer& pk, std::string_view k, int64_t v) { PackStr(pk, k); pk.pack(v); }
void KD(Packer& pk, std::string_view k, double v) { PackStr(pk, k); pk.pack(v); }

// `key` and at most kMaxSamples entries of `v` as a float64 array.
void PackF64Array(Packer& pk, std::string_view key, const std::vector<double>& v) {
  PackStr(pk, key);
  const size_t n = std::min(v.size(), kMaxSamples);
  pk.pack_array(static_cast<uint32_t>(n));
  for (size_t i = 0; i < n; ++i) pk.pack(v[i]);
}

// Appends the float array at `key` of `m` (absent or nil: nothing) to `out`.
absl::Status F64Array(const MapView& m, std::string_view key, std::vector<double>* out) {
  const msgpack::object* s = m.Find(key);
  if (!s) return absl::OkStatus();
  if (s->type != msgpack::type::ARRAY) {
    return absl::InvalidArgumentError(absl::StrCat("key '", std::string(key), "' not an array"));
  }
  for (uint32_t i = 0; i < s->via.array.size; ++i) {
    const msgpack::object& e = s->via.array.ptr[i];
    if (e.type != msgpack::type::FLOAT64 && e.type != msgpack::type::FLOAT32) {
      return absl::InvalidArgumentError(
          absl::StrCat("an entry of '", std::string(key), "' is not a float"));
    }
    out->push_back(e.via.f64);
  }
  return absl::OkStatus();
}

constexpr std::string_view kStatusNames[] = {"OK",      "WRONG_OUTPUT", "INVALID_DECISIONS",
                                             "RUN_ERROR", "TIMEOUT",    "POISON",
                                             "CANCELLED", "RESOURCE_EXHAUSTED"};

absl::StatusOr<int64_t> I64(const MapView& m, std::string_view key) {
  const msgpack::object* v = m.Find(key);
  if (!v) return int64_t{0};
  if (v->type == msgpack::type::POSITIVE_INTEGER) return static_cast<int64_t>(v->via.u64);
  if (v->type == msgpack::type::NEGATIVE_INTEGER) return v->via.i64;
  return absl::InvalidArgumentError(absl::StrCat("key '", std::string(key), "' is not an integer"));
}

}  // namespace

std::string_view StatusWireName(JobStatus s) {
  size_t i = static_cast<size_t>(s);
  return i < std::size(kStatusNames) ? kStatusNames[i] : "RUN_ERROR";
}

std::optional<JobStatus> ParseStatusWireName(std::string_view s) {
  for (size_t i = 0; i < std::size(kStatusNames); ++i) {
    if (kStatusNames[i] == s) return static_cast<JobStatus>(i);
  }
  return std::nullopt;
}

std::string EncodeRecord(const ResultRecord& r) {
  WireSink buf;
  Packer pk(buf);
  pk.pack_map(10 + (r.mismatch ? 1 : 0) + (r.sites.empty() ? 0 : 1) + (r.paired ? 1 : 0));
  KV(pk, "status", StatusWireName(r.status));
  KV(pk, "message", r.message);
  KV(pk, "module_hash", r.module_hash);
  KV(pk, "text_hash", r.text_hash);
  KV(pk, "pipeline", r.pipeline);
  PackStr(pk, "cost");
  const CostDistribution& c = r.cost;
  // The interference totals and the host-speed normalization only when measured (absent keys
  // read as 0 / no reference; decoders that predate them skip them).
  const bool sched = c.steal_seconds != 0 || c.run_wait_seconds != 0 || c.sampled_seconds != 0;
  const bool ref = !c.reference.empty();
  pk.pack_map(10 + (sched ? 3 : 0) + (ref ? 10 : 0));
  KD(pk, "median", c.median); KD(pk, "mad", c.mad); KD(pk, "ci_low", c.ci_low);
  KD(pk, "ci_high", c.ci_high); KD(pk, "mean", c.mean); KD(pk, "min", c.min);
  KI(pk, "calls_per_sample", c.calls_per_sample);
  KI(pk, "disturbed", c.disturbed);
  PackF64Array(pk, "samples", c.samples);
  PackStr(pk, "unstable"); pk.pack(c.unstable);
  if (sched) {
    KD(pk, "steal_seconds", c.steal_seconds); KD(pk, "run_wait_seconds", c.run_wait_seconds);
    KD(pk, "sampled_seconds", c.sampled_seconds);
  }
  if (ref) {
    KV(pk, "reference", c.reference);
    KD(pk, "reference_quiet_compute", c.reference_quiet_compute);
    KD(pk, "reference_quiet_memory", c.reference_quiet_memory);
    KD(pk, "reference_slowdown", c.reference_slowdown);
    KD(pk, "normalized_median", c.normalized_median); KD(pk, "normalized_mad", c.normalized_mad);
    KD(pk, "normalized_ci_low", c.normalized_ci_low);
    KD(pk, "normalized_ci_high", c.normalized_ci_high);
    PackF64Array(pk, "reference_compute", c.reference_compute);
    PackF64Array(pk, "reference_memory", c.reference_memory);
  }
  PackStr(pk, "analytical");
  const AnalyticalCost& a = r.analytical;
  pk.pack_map(8);
  KI(pk, "op_count", a.op_count); KD(pk, "flops", a.flops); KD(pk, "bytes_moved", a.bytes_moved);
  KD(pk, "roofline_seconds", a.roofline_seconds); KI(pk, "scratchpad_bytes", a.scratchpad_bytes);
  KD(pk, "scratchpad_traffic_bytes", a.scratchpad_traffic_bytes);
  KD(pk, "scratchpad_seconds", a.scratchpad_seconds);
  KI(pk, "peak_memory_bytes", a.peak_memory_bytes);
  PackStr(pk, "provenance");
  const Provenance& p = r.provenance;
  pk.pack_map(12);
  KV(pk, "host", p.host); KV(pk, "cpu", p.cpu); KV(pk, "isa", p.isa); KI(pk, "cores", p.cores);
  KI(pk, "threads", p.threads); KV(pk, "hlox_version", p.hlox_version);
  KV(pk, "worker_id", p.worker_id); KV(pk, "hardware_class", p.hardware_class);
  KV(pk, "protocol", p.protocol); KI(pk, "seed", static_cast<int64_t>(p.seed));
  KI(pk, "protocol_version", kVersion);
  KV(pk, "build_id", p.build_id);
  if (r.mismatch) {
    PackStr(pk, "mismatch");
    pk.pack_map(5);
    KI(pk, "output", r.mismatch->output); KI(pk, "index", r.mismatch->index);
    KD(pk, "expected", r.mismatch->expected); KD(pk, "actual", r.mismatch->actual);
    KV(pk, "detail", r.mismatch->detail);
  }
  KI(pk, "instruction_count", r.instruction_count);
  KD(pk, "eval_seconds", r.eval_seconds);
  if (!r.sites.empty()) KV(pk, "sites", r.sites);
  if (r.paired) {
    const PairedFigures& f = *r.paired;
    PackStr(pk, "paired");
    pk.pack_map(10);
    KD(pk, "ratio", f.ratio); KD(pk, "ci_low", f.ci_low); KD(pk, "ci_high", f.ci_high);
    PackStr(pk, "unstable"); pk.pack(f.unstable);
    KI(pk, "instance_count", f.instance_count); KI(pk, "calls_per_sample", f.calls_per_sample);
    KI(pk, "rounds", f.rounds);
    PackF64Array(pk, "ratios", f.ratios);
    KD(pk, "baseline_median", f.baseline_median); KD(pk, "candidate_median", f.candidate_median);
  }
  return std::move(buf.bytes);
}

absl::StatusOr<ResultRecord> DecodeRecord(std::string_view bytes) {
  UnpackScope scope;
  HLOX_ASSIGN_OR_RETURN(const msgpack::object* root, scope.Unpack(bytes));
  HLOX_ASSIGN_OR_RETURN(MapView m, MapView::Of(*root));
  ResultRecord r;
  HLOX_ASSIGN_OR_RETURN(std::string status, m.Str("status", kMaxNameBytes));
  std::optional<JobStatus> st = ParseStatusWireName(status);
  if (!st) return absl::InvalidArgumentError(absl::StrCat("unknown status '", status, "'"));
  r.status = *st;
  HLOX_ASSIGN_OR_RETURN(r.message, m.OptStr("message", kMaxTextBytes));
  HLOX_ASSIGN_OR_RETURN(r.module_hash, m.OptStr("module_hash", kMaxNameBytes));
  HLOX_ASSIGN_OR_RETURN(r.text_hash, m.OptStr("text_hash", kMaxNameBytes));
  HLOX_ASSIGN_OR_RETURN(r.pipeline, m.OptStr("pipeline", kMaxPipelineBytes));
  HLOX_ASSIGN_OR_RETURN(MapView c, m.Map("cost"));
  HLOX_ASSIGN_OR_RETURN(r.cost.median, c.OptF64("median", 0));
  HLOX_ASSIGN_OR_RETURN(r.cost.mad, c.OptF64("mad", 0));
  HLOX_ASSIGN_OR_RETURN(r.cost.ci_low, c.OptF64("ci_low", 0));
  HLOX_ASSIGN_OR_RETURN(r.cost.ci_high, c.OptF64("ci_high", 0));
  HLOX_ASSIGN_OR_RETURN(r.cost.mean, c.OptF64("mean", 0));
  HLOX_ASSIGN_OR_RETURN(r.cost.min, c.OptF64("min", 0));
  HLOX_ASSIGN_OR_RETURN(r.cost.calls_per_sample, I64(c, "calls_per_sample"));
  HLOX_ASSIGN_OR_RETURN(r.cost.disturbed, I64(c, "disturbed"));
  HLOX_ASSIGN_OR_RETURN(r.cost.unstable, c.OptBool("unstable", false));
  HLOX_RETURN_IF_ERROR(F64Array(c, "samples", &r.cost.samples));
  HLOX_ASSIGN_OR_RETURN(r.cost.steal_seconds, c.OptF64("steal_seconds", 0));
  HLOX_ASSIGN_OR_RETURN(r.cost.run_wait_seconds, c.OptF64("run_wait_seconds", 0));
  HLOX_ASSIGN_OR_RETURN(r.cost.sampled_seconds, c.OptF64("sampled_seconds", 0));
  HLOX_ASSIGN_OR_RETURN(r.cost.reference, c.OptStr("reference", kMaxNameBytes));
  HLOX_ASSIGN_OR_RETURN(r.cost.reference_quiet_compute, c.OptF64("reference_quiet_compute", 0));
  HLOX_ASSIGN_OR_RETURN(r.cost.reference_quiet_memory, c.OptF64("reference_quiet_memory", 0));
  HLOX_ASSIGN_OR_RETURN(r.cost.reference_slowdown, c.OptF64("reference_slowdown", 0));
  HLOX_ASSIGN_OR_RETURN(r.cost.normalized_median, c.OptF64("normalized_median", 0));
  HLOX_ASSIGN_OR_RETURN(r.cost.normalized_mad, c.OptF64("normalized_mad", 0));
  HLOX_ASSIGN_OR_RETURN(r.cost.normalized_ci_low, c.OptF64("normalized_ci_low", 0));
  HLOX_ASSIGN_OR_RETURN(r.cost.normalized_ci_high, c.OptF64("normalized_ci_high", 0));
  HLOX_RETURN_IF_ERROR(F64Array(c, "reference_compute", &r.cost.reference_compute));
  HLOX_RETURN_IF_ERROR(F64Array(c, "reference_memory", &r.cost.reference_memory));
  HLOX_ASSIGN_OR_RETURN(MapView a, m.Map("analytical"));
  HLOX_ASSIGN_OR_RETURN(r.analytical.op_count, I64(a, "op_count"));
  HLOX_ASSIGN_OR_RETURN(r.analytical.flops, a.OptF64("flops", 0));
  HLOX_ASSIGN_OR_RETURN(r.analytical.bytes_moved, a.OptF64("bytes_moved", 0));
  HLOX_ASSIGN_OR_RETURN(r.analytical.roofline_seconds, a.OptF64("roofline_seconds", 0));
  HLOX_ASSIGN_OR_RETURN(r.analytical.scratchpad_bytes, I64(a, "scratchpad_bytes"));
  HLOX_ASSIGN_OR_RETURN(r.analytical.scratchpad_traffic_bytes,
                        a.OptF64("scratchpad_traffic_bytes", 0));
  HLOX_ASSIGN_OR_RETURN(r.analytical.scratchpad_seconds, a.OptF64("scratchpad_seconds", 0));
  HLOX_ASSIGN_OR_RETURN(r.analytical.peak_memory_bytes, I64(a, "peak_memory_bytes"));
  HLOX_ASSIGN_OR_RETURN(MapView p, m.Map("provenance"));
  Provenance& pv = r.provenance;
  HLOX_ASSIGN_OR_RETURN(pv.host, p.OptStr("host", kMaxNameBytes));
  HLOX_ASSIGN_OR_RETURN(pv.cpu, p.OptStr("cpu", kMaxNameBytes));
  HLOX_ASSIGN_OR_RETURN(pv.isa, p.OptStr("isa", kMaxNameBytes));
  HLOX_ASSIGN_OR_RETURN(int64_t cores, I64(p, "cores"));
  HLOX_ASSIGN_OR_RETURN(int64_t threads, I64(p, "threads"));
  pv.cores = static_cast<int>(cores);
  pv.threads = static_cast<int>(threads);
  HLOX_ASSIGN_OR_RETURN(pv.hlox_version, p.OptStr("hlox_version", kMaxNameBytes));
  HLOX_ASSIGN_OR_RETURN(pv.build_id, p.OptStr("build_id", kMaxNameBytes));
  HLOX_ASSIGN_OR_RETURN(pv.worker_id, p.OptStr("worker_id", kMaxNameBytes));
  HLOX_ASSIGN_OR_RETURN(pv.hardware_class, p.OptStr("hardware_class", kMaxNameBytes));
  HLOX_ASSIGN_OR_RETURN(pv.protocol, p.OptStr("protocol", kMaxTextBytes));
  HLOX_ASSIGN_OR_RETURN(int64_t seed, I64(p, "seed"));
  pv.seed = static_cast<uint64_t>(seed);
  if (m.Find("mismatch")) {
    HLOX_ASSIGN_OR_RETURN(MapView mm, m.Map("mismatch"));
    Mismatch x;
    HLOX_ASSIGN_OR_RETURN(x.output, I64(mm, "output"));
    HLOX_ASSIGN_OR_RETURN(x.index, I64(mm, "index"));
    HLOX_ASSIGN_OR_RETURN(x.expected, mm.OptF64("expected", 0));
    HLOX_ASSIGN_OR_RETURN(x.actual, mm.OptF64("actual", 0));
    HLOX_ASSIGN_OR_RETURN(x.detail, mm.OptStr("detail", kMaxTextBytes));
    r.mismatch = std::move(x);
  }
  HLOX_ASSIGN_OR_RETURN(r.instruction_count, I64(m, "instruction_count"));
  HLOX_ASSIGN_OR_RETURN(r.eval_seconds, m.OptF64("eval_seconds", 0));
  HLOX_ASSIGN_OR_RETURN(r.sites, m.OptStr("sites", kMaxSitesBytes));
  if (m.Find("paired")) {
    HLOX_ASSIGN_OR_RETURN(MapView pm, m.Map("paired"));
    PairedFigures f;
    HLOX_ASSIGN_OR_RETURN(f.ratio, pm.OptF64("ratio", 1));
    HLOX_ASSIGN_OR_RETURN(f.ci_low, pm.OptF64("ci_low", 1));
    HLOX_ASSIGN_OR_RETURN(f.ci_high, pm.OptF64("ci_high", 1));
    HLOX_ASSIGN_OR_RETURN(f.unstable, pm.OptBool("unstable", false));
    HLOX_ASSIGN_OR_RETURN(f.instance_count, I64(pm, "instance_count"));
    HLOX_ASSIGN_OR_RETURN(f.calls_per_sample, I64(pm, "calls_per_sample"));
    HLOX_ASSIGN_OR_RETURN(f.rounds, I64(pm, "rounds"));
    HLOX_RETURN_IF_ERROR(F64Array(pm, "ratios", &f.ratios));
    HLOX_ASSIGN_OR_RETURN(f.baseline_median, pm.OptF64("baseline_median", 0));
    HLOX_ASSIGN_OR_RETURN(f.candidate_median, pm.OptF64("candidate_median", 0));
    r.paired = std::move(f);
  }
  return r;
}

std::string TextHash(std::string_view text) {
  return HashText(text);  // cost/module_hash.h: the one content hash of hlox
}

std::string CacheKey(const std::string& module_hash, const std::string& pipeline,
                     const PipelineDecisions& decisions, const std::string& hardware_class) {
  WireSink buf;
  Packer pk(buf);
  pk.pack_array(5);
  PackStr(pk, module_hash);
  PackStr(pk, pipeline);
  PackDecisions(pk, decisions);
  PackStr(pk, hardware_class);
  pk.pack(static_cast<int>(kVersion));
  return TextHash(buf.bytes);
}

std::string CacheKey(const SubmitMsg& job, const std::string& hardware_class) {
  const std::string base = CacheKey(job.module_hash, job.pipeline, job.decisions, hardware_class);
  if (job.kind.empty() || job.kind == kKindEvaluate) return base;
  // Another kind: the evaluation's key, the kind and its fields (the whole JOB encoding of
  // them, so a field added to a kind is covered without touching this).
  JobMsg fields;
  fields.kind = job.kind;
  fields.paired = job.paired;
  WireSink buf;
  Packer pk(buf);
  pk.pack_array(2);
  PackStr(pk, base);
  PackBin(pk, Encode(fields));
  return TextHash(buf.bytes);
}

}  // namespace hlox::proto
