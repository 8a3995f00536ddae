// Result record <-> JSON. Field names mirror the C++ members; docs/RESULTS.md is the reference.
#include "cost/result_json.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace hlox {

using nlohmann::json;

namespace {

// JSON has no NaN/Inf: a mismatch's values may be non-finite, so those are written as the
// strings "nan", "inf", "-inf".
json DoubleToJson(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

absl::Status DoubleFromJson(const json& j, const char* key, double* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (it->is_number()) {
    *out = it->get<double>();
  } else if (it->is_string() && (*it == "nan" || *it == "inf" || *it == "-inf")) {
    std::string s = it->get<std::string>();
    *out = s == "nan" ? std::nan("") : (s == "inf" ? HUGE_VAL : -HUGE_VAL);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("result JSON: '", key, "' is not a number"));
  }
  return absl::OkStatus();
}

}  // namespace

json ToJson(const CostDistribution& c) {
  json j{{"median", c.median},   {"mad", c.mad},
              {"ci_low", c.ci_low},   {"ci_high", c.ci_high},
              {"mean", c.mean},       {"min", c.min},
              {"calls_per_sample", c.calls_per_sample},
              {"disturbed", c.disturbed},
              {"steal_seconds", c.steal_seconds},
              {"run_wait_seconds", c.run_wait_seconds},
              {"sampled_seconds", c.sampled_seconds},
              {"samples", c.samples}, {"unstable", c.unstable}};
  // Host-speed normalization, only when a reference ran (cost/host_reference.h).
  if (!c.reference.empty()) {
    j["reference"] = c.reference;
    j["reference_quiet_compute"] = c.reference_quiet_compute;
    j["reference_quiet_memory"] = c.reference_quiet_memory;
    j["reference_slowdown"] = c.reference_slowdown;
    j["normalized_median"] = c.normalized_median;
    j["normalized_mad"] = c.normalized_mad;
    j["normalized_ci_low"] = c.normalized_ci_low;
    j["normalized_ci_high"] = c.normalized_ci_high;
    j["reference_compute"] = c.reference_compute;
    j["reference_memory"] = c.reference_memory;
  }
  return j;
}

json ToJson(const AnalyticalCost& a) {
  return json{{"op_count", a.op_count},
              {"flops", a.flops},
              {"bytes_moved", a.bytes_moved},
              {"roofline_seconds", a.roofline_seconds},
              {"scratchpad_bytes", a.scratchpad_bytes},
              {"scratchpad_traffic_bytes", a.scratchpad_traffic_bytes},
              {"scratchpad_seconds", a.scratchpad_seconds},
              {"peak_memory_bytes", a.peak_memory_bytes}};
}

json ToJson(const Provenance& p) {
  return json{{"host", p.host},
              {"cpu", p.cpu},
              {"isa", p.isa},
              {"cores", p.cores},
              {"threads", p.threads},
              {"hlox_version", p.hlox_version},
              {"build_id", p.build_id},
              {"worker_id", p.worker_id},
              {"hardware_class", p.hardware_class},
              {"protocol", p.protocol},
              {"seed", p.seed}};
}

json ToJson(const ResultRecord& r) {
  json j{{"status", std::string(JobStatusName(r.status))},
         {"message", r.message},
         {"module_hash", r.module_hash},
         {"text_hash", r.text_hash},
         {"pipeline", r.pipeline},
         {"cost", ToJson(r.cost)},
         {"analytical", ToJson(r.analytical)},
         {"provenance", ToJson(r.provenance)},
         {"instruction_count", r.instruction_count},
         {"eval_seconds", r.eval_seconds}};
  if (!r.sites.empty()) j["sites"] = r.sites;  // a sites job's answer: JSON text, as on the wire
  if (r.paired) {  // a paired job's answer, with the wire's keys
    const PairedFigures& p = *r.paired;
    j["paired"] = json{{"ratio", p.ratio},
                       {"ci_low", p.ci_low},
                       {"ci_high", p.ci_high},
                       {"unstable", p.unstable},
                       {"instance_count", p.instance_count},
                       {"calls_per_sample", p.calls_per_sample},
                       {"rounds", p.rounds},
                       {"ratios", p.ratios},
                       {"baseline_median", p.baseline_median},
                       {"candidate_median", p.candidate_median}};
  }
  if (r.mismatch) {
    j["mismatch"] = json{{"output", r.mismatch->output},
                         {"index", r.mismatch->index},
                         {"expected", DoubleToJson(r.mismatch->expected)},
                         {"actual", DoubleToJson(r.mismatch->actual)},
                         {"detail", r.mismatch->detail}};
  } else {
    j["mismatch"] = nullptr;
  }
  return j;
}

std::string ResultToJsonString(const ResultRecord& r, bool include_samples, int indent) {
  json j = ToJson(r);
  if (!include_samples) {
    j["cost"].erase("samples");
    j["cost"].erase("reference_compute");
    j["cost"].erase("reference_memory");
  }
  // Non-finite doubles would be written as null; the record never holds them by contract.
  return j.dump(indent);
}

namespace {

// Reads j[key] into *out when present; a present key of the wrong type is an error.
template <typename T>
absl::Status Get(const json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  try {
    *out = it->get<T>();
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("result JSON: key '", key, "': ", e.what()));
  }
  return absl::OkStatus();
}

absl::Status Object(const json& j, const char* key, const json** out) {
  auto it = j.find(key);
  *out = nullptr;
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("result JSON: '", key, "' is not an object"));
  }
  *out = &*it;
  return absl::OkStatus();
}

#define HLOX_GET(obj, key, field) \
  if (auto st = Get(obj, key, field); !st.ok()) return st

}  // namespace

absl::StatusOr<ResultRecord> ResultFromJson(const json& j) {
  if (!j.is_object()) return absl::InvalidArgumentError("result JSON: not an object");
  ResultRecord r;
  std::string status;
  HLOX_GET(j, "status", &status);
  if (!status.empty()) {
    auto s = ParseJobStatus(status);
    if (!s) return absl::InvalidArgumentError(absl::StrCat("result JSON: unknown status '", status, "'"));
    r.status = *s;
  }
  HLOX_GET(j, "message", &r.message);
  HLOX_GET(j, "module_hash", &r.module_hash);
  HLOX_GET(j, "text_hash", &r.text_hash);
  HLOX_GET(j, "pipeline", &r.pipeline);
  HLOX_GET(j, "instruction_count", &r.instruction_count);
  HLOX_GET(j, "eval_seconds", &r.eval_seconds);
  HLOX_GET(j, "sites", &r.sites);
  const json* o = nullptr;
  if (auto st = Object(j, "cost", &o); !st.ok()) return st;
  if (o) {
    CostDistribution& c = r.cost;
    HLOX_GET(*o, "median", &c.median);
    HLOX_GET(*o, "mad", &c.mad);
    HLOX_GET(*o, "ci_low", &c.ci_low);
    HLOX_GET(*o, "ci_high", &c.ci_high);
    HLOX_GET(*o, "mean", &c.mean);
    HLOX_GET(*o, "min", &c.min);
    HLOX_GET(*o, "calls_per_sample", &c.calls_per_sample);
    HLOX_GET(*o, "disturbed", &c.disturbed);
    HLOX_GET(*o, "steal_seconds", &c.steal_seconds);
    HLOX_GET(*o, "run_wait_seconds", &c.run_wait_seconds);
    HLOX_GET(*o, "sampled_seconds", &c.sampled_seconds);
    HLOX_GET(*o, "samples", &c.samples);
    HLOX_GET(*o, "unstable", &c.unstable);
    HLOX_GET(*o, "reference", &c.reference);
    HLOX_GET(*o, "reference_quiet_compute", &c.reference_quiet_compute);
    HLOX_GET(*o, "reference_quiet_memory", &c.reference_quiet_memory);
    HLOX_GET(*o, "reference_slowdown", &c.reference_slowdown);
    HLOX_GET(*o, "normalized_median", &c.normalized_median);
    HLOX_GET(*o, "normalized_mad", &c.normalized_mad);
    HLOX_GET(*o, "normalized_ci_low", &c.normalized_ci_low);
    HLOX_GET(*o, "normalized_ci_high", &c.normalized_ci_high);
    HLOX_GET(*o, "reference_compute", &c.reference_compute);
    HLOX_GET(*o, "reference_memory", &c.reference_memory);
  }
  if (auto st = Object(j, "analytical", &o); !st.ok()) return st;
  if (o) {
    AnalyticalCost& a = r.analytical;
    HLOX_GET(*o, "op_count", &a.op_count);
    HLOX_GET(*o, "flops", &a.flops);
    HLOX_GET(*o, "bytes_moved", &a.bytes_moved);
    HLOX_GET(*o, "roofline_seconds", &a.roofline_seconds);
    HLOX_GET(*o, "scratchpad_bytes", &a.scratchpad_bytes);
    HLOX_GET(*o, "scratchpad_traffic_bytes", &a.scratchpad_traffic_bytes);
    if (o->contains("scratchpad_seconds")) HLOX_GET(*o, "scratchpad_seconds", &a.scratchpad_seconds);
    HLOX_GET(*o, "peak_memory_bytes", &a.peak_memory_bytes);
  }
  if (auto st = Object(j, "provenance", &o); !st.ok()) return st;
  if (o) {
    Provenance& p = r.provenance;
    HLOX_GET(*o, "host", &p.host);
    HLOX_GET(*o, "cpu", &p.cpu);
    HLOX_GET(*o, "isa", &p.isa);
    HLOX_GET(*o, "cores", &p.cores);
    HLOX_GET(*o, "threads", &p.threads);
    HLOX_GET(*o, "hlox_version", &p.hlox_version);
    HLOX_GET(*o, "build_id", &p.build_id);
    HLOX_GET(*o, "worker_id", &p.worker_id);
    HLOX_GET(*o, "hardware_class", &p.hardware_class);
    HLOX_GET(*o, "protocol", &p.protocol);
    HLOX_GET(*o, "seed", &p.seed);
  }
  if (auto st = Object(j, "paired", &o); !st.ok()) return st;
  if (o) {
    PairedFigures p;
    HLOX_GET(*o, "ratio", &p.ratio);
    HLOX_GET(*o, "ci_low", &p.ci_low);
    HLOX_GET(*o, "ci_high", &p.ci_high);
    HLOX_GET(*o, "unstable", &p.unstable);
    HLOX_GET(*o, "instance_count", &p.instance_count);
    HLOX_GET(*o, "calls_per_sample", &p.calls_per_sample);
    HLOX_GET(*o, "rounds", &p.rounds);
    HLOX_GET(*o, "ratios", &p.ratios);
    HLOX_GET(*o, "baseline_median", &p.baseline_median);
    HLOX_GET(*o, "candidate_median", &p.candidate_median);
    r.paired = p;
  }
  if (auto st = Object(j, "mismatch", &o); !st.ok()) return st;
  if (o) {
    Mismatch m;
    HLOX_GET(*o, "output", &m.output);
    HLOX_GET(*o, "index", &m.index);
    if (auto st = DoubleFromJson(*o, "expected", &m.expected); !st.ok()) return st;
    if (auto st = DoubleFromJson(*o, "actual", &m.actual); !st.ok()) return st;
    HLOX_GET(*o, "detail", &m.detail);
    r.mismatch = m;
  }
  return r;
}

absl::StatusOr<ResultRecord> ResultFromJsonString(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError("result JSON: parse error");
  return ResultFromJson(j);
}

}  // namespace hlox
