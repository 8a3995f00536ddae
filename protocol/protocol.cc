// Encoding and bounded decoding of every protocol message; see protocol.h and docs/PROTOCOL.md.
#include "protocol/protocol.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "protocol/msgpack_view.h"

namespace hlox::proto {
namespace {

using Packer = WirePacker;

void KV(Packer& pk, std::string_view k, std::string_view v) { PackStr(pk, k); PackStr(pk, v); }
void KU(Packer& pk, std::string_view k, uint64_t v) { PackStr(pk, k); pk.pack(v); }
void KB(Packer& pk, std::string_view k, bool v) { PackStr(pk, k); pk.pack(v); }
void KBin(Packer& pk, std::string_view k, std::string_view v) { PackStr(pk, k); PackBin(pk, v); }

// Unpacks and runs `fn(MapView)`; the unpacked message lives for the call.
template <typename T, typename Fn>
absl::StatusOr<T> DecodeWith(std::string_view body, Fn fn) {
  UnpackScope scope;
  HLOX_ASSIGN_OR_RETURN(const msgpack::object* root, scope.Unpack(body));
  HLOX_ASSIGN_OR_RETURN(MapView m, MapView::Of(*root));
  return fn(m);
}

absl::StatusOr<uint32_t> U32(const MapView& m, std::string_view key, bool required,
                             uint32_t def = 0) {
  absl::StatusOr<uint64_t> v = required ? m.U64(key) : m.OptU64(key, def);
  if (!v.ok()) return v.status();
  if (*v > 0xffffffffu) return absl::InvalidArgumentError(absl::StrCat("key '", std::string(key), "' too large"));
  return static_cast<uint32_t>(*v);
}

// Limits of a paired job's protocol (beyond them a verdict is not what the agent meant).
constexpr uint64_t kMaxPairedTimeCapMs = 600000;   // 10 minutes
constexpr uint64_t kMaxPairedWarmups = 1000;
constexpr uint64_t kMaxPairedInstances = 64;
constexpr uint64_t kMaxMinSampleUs = 1000000;

bool IsPaired(std::string_view kind) { return kind == kKindPaired; }

// Keys a job of `kind` adds to SUBMIT/JOB besides its common ones.
uint32_t KindKeys(std::string_view kind) { return IsPaired(kind) ? 11 : (kind.empty() || kind == kKindEvaluate ? 0 : 1); }

// Packs "kind" (unless evaluate) and the kind's fields.
void PackKind(Packer& pk, std::string_view kind, const PairedSpec& p) {
  if (kind.empty() || kind == kKindEvaluate) return;
  KV(pk, "kind", kind);
  if (!IsPaired(kind)) return;
  KV(pk, "baseline_pipeline", p.baseline_pipeline);
  PackStr(pk, "baseline_decisions");
  PackDecisions(pk, p.baseline_decisions);
  KU(pk, "seed", p.seed);
  const TimingProtocol& t = p.protocol;
  KU(pk, "warmups", static_cast<uint64_t>(std::max(0, t.warmups)));
  KU(pk, "min_rounds", static_cast<uint64_t>(std::max(0, t.min_samples)));
  KU(pk, "max_rounds", static_cast<uint64_t>(std::max(0, t.max_samples)));
  PackStr(pk, "target_rel_error");
  pk.pack(t.target_rel_error);
  KU(pk, "time_cap_ms", static_cast<uint64_t>(std::llround(std::max(0.0, t.time_cap_seconds) * 1e3)));
  KU(pk, "min_sample_us", static_cast<uint64_t>(std::llround(std::max(0.0, t.min_sample_seconds) * 1e6)));
  KU(pk, "instances", static_cast<uint64_t>(std::max(0, t.paired_instances)));
}

absl::StatusOr<uint64_t> Bounded(const MapView& m, std::string_view key, uint64_t def, uint64_t lo,
                                 uint64_t hi) {
  HLOX_ASSIGN_OR_RETURN(uint64_t v, m.OptU64(key, def));
  if (v < lo || v > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat("key '", std::string(key), "' out of ", lo, "..", hi));
  }
  return v;
}

// Reads "kind" (default evaluate; unknown kinds are an error) and the kind's fields.
absl::Status DecodeKind(const MapView& m, std::string* kind, PairedSpec* p) {
  HLOX_ASSIGN_OR_RETURN(*kind, m.OptStr("kind", kMaxNameBytes, kKindEvaluate));
  if (!IsKnownKind(*kind)) return absl::InvalidArgumentError(absl::StrCat("unknown job kind '", *kind, "'"));
  if (!IsPaired(*kind)) return absl::OkStatus();
  HLOX_ASSIGN_OR_RETURN(p->baseline_pipeline, m.OptStr("baseline_pipeline", kMaxPipelineBytes));
  HLOX_ASSIGN_OR_RETURN(p->baseline_decisions, m.OptDecisions("baseline_decisions"));
  HLOX_ASSIGN_OR_RETURN(p->seed, m.OptU64("seed", 0));
  TimingProtocol& t = p->protocol;
  HLOX_ASSIGN_OR_RETURN(uint64_t warmups, Bounded(m, "warmups", t.warmups, 0, kMaxPairedWarmups));
  HLOX_ASSIGN_OR_RETURN(uint64_t max_rounds, Bounded(m, "max_rounds", t.max_samples, 1, kMaxSamples));
  HLOX_ASSIGN_OR_RETURN(uint64_t min_rounds, Bounded(m, "min_rounds", std::min<uint64_t>(t.min_samples, max_rounds), 0, max_rounds));
  HLOX_ASSIGN_OR_RETURN(double rel, m.OptF64("target_rel_error", t.target_rel_error));
  if (!(rel >= 0 && rel <= 1)) return absl::InvalidArgumentError("key 'target_rel_error' out of 0..1");
  HLOX_ASSIGN_OR_RETURN(uint64_t cap_ms, Bounded(m, "time_cap_ms", std::llround(t.time_cap_seconds * 1e3), 0, kMaxPairedTimeCapMs));
  HLOX_ASSIGN_OR_RETURN(uint64_t sample_us, Bounded(m, "min_sample_us", std::llround(t.min_sample_seconds * 1e6), 0, kMaxMinSampleUs));
  HLOX_ASSIGN_OR_RETURN(uint64_t instances, Bounded(m, "instances", t.paired_instances, 1, kMaxPairedInstances));
  t.warmups = static_cast<int>(warmups);
  t.min_samples = static_cast<int>(min_rounds);
  t.max_samples = static_cast<int>(max_rounds);
  t.target_rel_error = rel;
  t.time_cap_seconds = static_cast<double>(cap_ms) * 1e-3;
  t.min_sample_seconds = static_cast<double>(sample_us) * 1e-6;
  t.paired_instances = static_cast<int>(instances);
  return absl::OkStatus();
}

}  // namespace

bool IsKnownKind(std::string_view kind) {
  return kind == kKindEvaluate || kind == kKindSites || kind == kKindPaired;
}

bool KindCacheable(std::string_view kind) { return !IsPaired(kind); }

bool IsKnownCommand(uint8_t c) {
  switch (static_cast<Command>(c)) {
    case Command::kSubmit: case Command::kResult: case Command::kError: case Command::kHeartbeat:
    case Command::kReady: case Command::kJob: case Command::kDone: case Command::kNeedModule:
    case Command::kReregister: case Command::kDisconnect: case Command::kControl:
    case Command::kControlReply:
      return true;
  }
  return false;
}

std::string MakeHeader(Command c) {
  return std::string{'H', 'X', static_cast<char>(kVersion), static_cast<char>(c)};
}

absl::StatusOr<Command> ParseHeader(std::string_view h) {
  if (h.size() != 4 || h[0] != 'H' || h[1] != 'X') {
    return absl::InvalidArgumentError(absl::StrCat(kErrBadFrame, ": header is not HX<v><cmd>"));
  }
  if (static_cast<uint8_t>(h[2]) != kVersion) {
    return absl::InvalidArgumentError(absl::StrCat(kErrBadVersion, ": protocol version ",
                                                   static_cast<int>(static_cast<uint8_t>(h[2])),
                                                   ", this broker speaks ", int(kVersion)));
  }
  if (!IsKnownCommand(static_cast<uint8_t>(h[3]))) {
    return absl::InvalidArgumentError(absl::StrCat(kErrUnknownCommand, ": command byte ",
                                                   static_cast<int>(static_cast<uint8_t>(h[3]))));
  }
  return static_cast<Command>(h[3]);
}

const char* ErrorCodeFor(const absl::Status& s) {
  return s.code() == absl::StatusCode::kResourceExhausted ? kErrLimit : kErrDecode;
}

std::string Encode(const SubmitMsg& m) {
  WireSink buf;
  Packer pk(buf);
  pk.pack_map((m.module_text.empty() ? 9 : 10) + KindKeys(m.kind));
  KV(pk, "id", m.job_id);
  KV(pk, "campaign", m.campaign);
  KV(pk, "module_hash", m.module_hash);
  if (!m.module_text.empty()) KV(pk, "module", m.module_text);
  KV(pk, "pipeline", m.pipeline);
  PackStr(pk, "decisions");
  PackDecisions(pk, m.decisions);
  KV(pk, "class", m.hardware_class);
  KU(pk, "queue_timeout_ms", m.queue_timeout_ms);
  KU(pk, "run_timeout_ms", m.run_timeout_ms);
  KB(pk, "cache", m.use_cache);
  PackKind(pk, m.kind, m.paired);
  return std::move(buf.bytes);
}

std::string PeekJobId(std::string_view body) {
  absl::StatusOr<std::string> id = DecodeWith<std::string>(
      body, [](const MapView& m) -> absl::StatusOr<std::string> { return m.Str("id", kMaxNameBytes); });
  return id.ok() ? *id : std::string();
}

absl::StatusOr<SubmitMsg> DecodeSubmit(std::string_view body) {
  return DecodeWith<SubmitMsg>(body, [](const MapView& m) -> absl::StatusOr<SubmitMsg> {
    SubmitMsg s;
    HLOX_ASSIGN_OR_RETURN(s.job_id, m.Str("id", kMaxNameBytes));
    if (s.job_id.empty()) return absl::InvalidArgumentError("empty job id");
    HLOX_ASSIGN_OR_RETURN(s.campaign, m.OptStr("campaign", kMaxNameBytes));
    HLOX_ASSIGN_OR_RETURN(s.module_hash, m.Str("module_hash", kMaxNameBytes));
    HLOX_ASSIGN_OR_RETURN(s.module_text, m.OptStr("module", kMaxModuleBytes));
    HLOX_ASSIGN_OR_RETURN(s.pipeline, m.Str("pipeline", kMaxPipelineBytes));
    HLOX_ASSIGN_OR_RETURN(s.decisions, m.OptDecisions("decisions"));
    HLOX_ASSIGN_OR_RETURN(s.hardware_class, m.OptStr("class", kMaxNameBytes));
    HLOX_ASSIGN_OR_RETURN(s.queue_timeout_ms, U32(m, "queue_timeout_ms", false));
    HLOX_ASSIGN_OR_RETURN(s.run_timeout_ms, U32(m, "run_timeout_ms", false));
    HLOX_ASSIGN_OR_RETURN(s.use_cache, m.OptBool("cache", true));
    HLOX_RETURN_IF_ERROR(DecodeKind(m, &s.kind, &s.paired));
    return s;
  });
}

std::string Encode(const ResultMsg& m) {
  WireSink buf;
  Packer pk(buf);
  pk.pack_map(4);
  KV(pk, "id", m.job_id);
  KU(pk, "attempts", m.attempts);
  KB(pk, "cached", m.cached);
  KBin(pk, "record", m.record);
  return std::move(buf.bytes);
}

absl::StatusOr<ResultMsg> DecodeResult(std::string_view body) {
  return DecodeWith<ResultMsg>(body, [](const MapView& m) -> absl::StatusOr<ResultMsg> {
    ResultMsg r;
    HLOX_ASSIGN_OR_RETURN(r.job_id, m.Str("id", kMaxNameBytes));
    HLOX_ASSIGN_OR_RETURN(r.attempts, U32(m, "attempts", true));
    HLOX_ASSIGN_OR_RETURN(r.cached, m.Bool("cached"));
    HLOX_ASSIGN_OR_RETURN(r.record, m.Str("record", kMaxMessageBytes));
    return r;
  });
}

std::string Encode(const ErrorMsg& m) {
  WireSink buf;
  Packer pk(buf);
  pk.pack_map(3);
  KV(pk, "id", m.job_id);
  KV(pk, "code", m.code);
  KV(pk, "message", m.message);
  return std::move(buf.bytes);
}

absl::StatusOr<ErrorMsg> DecodeError(std::string_view body) {
  return DecodeWith<ErrorMsg>(body, [](const MapView& m) -> absl::StatusOr<ErrorMsg> {
    ErrorMsg e;
    HLOX_ASSIGN_OR_RETURN(e.job_id, m.OptStr("id", kMaxNameBytes));
    HLOX_ASSIGN_OR_RETURN(e.code, m.Str("code", kMaxNameBytes));
    HLOX_ASSIGN_OR_RETURN(e.message, m.OptStr("message", kMaxTextBytes));
    return e;
  });
}

std::string Encode(const HeartbeatMsg& m) {
  WireSink buf;
  Packer pk(buf);
  pk.pack_map(1);
  KU(pk, "instance", m.instance);
  return std::move(buf.bytes);
}

absl::StatusOr<HeartbeatMsg> DecodeHeartbeat(std::string_view body) {
  if (body.empty()) return HeartbeatMsg{};
  return DecodeWith<HeartbeatMsg>(body, [](const MapView& m) -> absl::StatusOr<HeartbeatMsg> {
    HeartbeatMsg h;
    HLOX_ASSIGN_OR_RETURN(h.instance, m.OptU64("instance", 0));
    return h;
  });
}

std::string Encode(const ReadyMsg& m) {
  WireSink buf;
  Packer pk(buf);
  pk.pack_map(11);
  KV(pk, "worker_id", m.worker_id);
  KV(pk, "host", m.host);
  KV(pk, "class", m.hardware_class);
  KV(pk, "version", m.version);
  KU(pk, "cores", m.cores);
  KU(pk, "threads", m.threads);
  KU(pk, "credit", m.credit);
  KV(pk, "cpu", m.cpu);
  KV(pk, "isa", m.isa);
  KU(pk, "protocol", m.protocol);
  KV(pk, "build", m.build);
  return std::move(buf.bytes);
}

absl::StatusOr<ReadyMsg> DecodeReady(std::string_view body) {
  return DecodeWith<ReadyMsg>(body, [](const MapView& m) -> absl::StatusOr<ReadyMsg> {
    ReadyMsg r;
    HLOX_ASSIGN_OR_RETURN(r.worker_id, m.Str("worker_id", kMaxNameBytes));
    HLOX_ASSIGN_OR_RETURN(r.host, m.OptStr("host", kMaxNameBytes));
    HLOX_ASSIGN_OR_RETURN(r.hardware_class, m.Str("class", kMaxNameBytes));
    HLOX_ASSIGN_OR_RETURN(r.version, m.OptStr("version", kMaxNameBytes));
    HLOX_ASSIGN_OR_RETURN(r.cores, U32(m, "cores", false));
    HLOX_ASSIGN_OR_RETURN(r.threads, U32(m, "threads", false));
    HLOX_ASSIGN_OR_RETURN(r.credit, U32(m, "credit", true));
    if (r.credit == 0 || r.credit > 1024) return absl::InvalidArgumentError("credit out of 1..1024");
    HLOX_ASSIGN_OR_RETURN(r.cpu, m.OptStr("cpu", kMaxNameBytes));
    HLOX_ASSIGN_OR_RETURN(r.isa, m.OptStr("isa", kMaxNameBytes));
    HLOX_ASSIGN_OR_RETURN(r.protocol, U32(m, "protocol", false, kVersion));
    HLOX_ASSIGN_OR_RETURN(r.build, m.OptStr("build", kMaxNameBytes));
    return r;
  });
}

std::string Encode(const JobMsg& m) {
  WireSink buf;
  Packer pk(buf);
  pk.pack_map((m.module_text.empty() ? 6 : 7) + KindKeys(m.kind));
  KV(pk, "id", m.job_id);
  KU(pk, "attempt", m.attempt);
  KV(pk, "module_hash", m.module_hash);
  if (!m.module_text.empty()) KV(pk, "module", m.module_text);
  KV(pk, "pipeline", m.pipeline);
  PackStr(pk, "decisions");
  PackDecisions(pk, m.decisions);
  KU(pk, "run_timeout_ms", m.run_timeout_ms);
  PackKind(pk, m.kind, m.paired);
  return std::move(buf.bytes);
}

absl::StatusOr<JobMsg> DecodeJob(std::string_view body) {
  return DecodeWith<JobMsg>(body, [](const MapView& m) -> absl::StatusOr<JobMsg> {
    JobMsg j;
    HLOX_ASSIGN_OR_RETURN(j.job_id, m.Str("id", kMaxNameBytes));
    HLOX_ASSIGN_OR_RETURN(j.attempt, U32(m, "attempt", true));
    HLOX_ASSIGN_OR_RETURN(j.module_hash, m.Str("module_hash", kMaxNameBytes));
    HLOX_ASSIGN_OR_RETURN(j.module_text, m.OptStr("module", kMaxModuleBytes));
    HLOX_ASSIGN_OR_RETURN(j.pipeline, m.Str("pipeline", kMaxPipelineBytes));
    HLOX_ASSIGN_OR_RETURN(j.decisions, m.OptDecisions("decisions"));
    HLOX_ASSIGN_OR_RETURN(j.run_timeout_ms, U32(m, "run_timeout_ms", true));
    HLOX_RETURN_IF_ERROR(DecodeKind(m, &j.kind, &j.paired));
    return j;
  });
}

std::string Encode(const DoneMsg& m) {
  WireSink buf;
  Packer pk(buf);
  pk.pack_map(4);
  KV(pk, "id", m.job_id);
  KU(pk, "attempt", m.attempt);
  KB(pk, "crashed", m.crashed);
  KBin(pk, "record", m.record);
  return std::move(buf.bytes);
}

absl::StatusOr<DoneMsg> DecodeDone(std::string_view body) {
  return DecodeWith<DoneMsg>(body, [](const MapView& m) -> absl::StatusOr<DoneMsg> {
    DoneMsg d;
    HLOX_ASSIGN_OR_RETURN(d.job_id, m.Str("id", kMaxNameBytes));
    HLOX_ASSIGN_OR_RETURN(d.attempt, U32(m, "attempt", true));
    HLOX_ASSIGN_OR_RETURN(d.crashed, m.Bool("crashed"));
    HLOX_ASSIGN_OR_RETURN(d.record, m.Str("record", kMaxMessageBytes));
    return d;
  });
}

std::string Encode(const NeedModuleMsg& m) {
  WireSink buf;
  Packer pk(buf);
  pk.pack_map(3);
  KV(pk, "id", m.job_id);
  KU(pk, "attempt", m.attempt);
  KV(pk, "module_hash", m.module_hash);
  return std::move(buf.bytes);
}

absl::StatusOr<NeedModuleMsg> DecodeNeedModule(std::string_view body) {
  return DecodeWith<NeedModuleMsg>(body, [](const MapView& m) -> absl::StatusOr<NeedModuleMsg> {
    NeedModuleMsg n;
    HLOX_ASSIGN_OR_RETURN(n.job_id, m.Str("id", kMaxNameBytes));
    HLOX_ASSIGN_OR_RETURN(n.attempt, U32(m, "attempt", true));
    HLOX_ASSIGN_OR_RETURN(n.module_hash, m.Str("module_hash", kMaxNameBytes));
    return n;
  });
}

std::string Encode(const ControlMsg& m) {
  WireSink buf;
  Packer pk(buf);
  pk.pack_map(2);
  KV(pk, "op", m.op);
  KV(pk, "target", m.target);
  return std::move(buf.bytes);
}

absl::StatusOr<ControlMsg> DecodeControl(std::string_view body) {
  return DecodeWith<ControlMsg>(body, [](const MapView& m) -> absl::StatusOr<ControlMsg> {
    ControlMsg c;
    HLOX_ASSIGN_OR_RETURN(c.op, m.Str("op", kMaxNameBytes));
    HLOX_ASSIGN_OR_RETURN(c.target, m.OptStr("target", kMaxNameBytes));
    return c;
  });
}

std::string Encode(const ControlReplyMsg& m) {
  WireSink buf;
  Packer pk(buf);
  pk.pack_map(3);
  KB(pk, "ok", m.ok);
  KV(pk, "message", m.message);
  KV(pk, "json", m.json);
  return std::move(buf.bytes);
}

absl::StatusOr<ControlReplyMsg> DecodeControlReply(std::string_view body) {
  return DecodeWith<ControlReplyMsg>(body, [](const MapView& m) -> absl::StatusOr<ControlReplyMsg> {
    ControlReplyMsg r;
    HLOX_ASSIGN_OR_RETURN(r.ok, m.Bool("ok"));
    HLOX_ASSIGN_OR_RETURN(r.message, m.OptStr("message", kMaxTextBytes));
    HLOX_ASSIGN_OR_RETURN(r.json, m.OptStr("json", kMaxMessageBytes));
    return r;
  });
}

std::string ControlAddressFor(const std::string& addr) {
  if (addr.rfind("ipc://", 0) == 0 || addr.rfind("inproc://", 0) == 0) return addr + ".ctl";
  if (addr.rfind("tcp://", 0) == 0) {
    size_t colon = addr.rfind(':');
    if (colon == std::string::npos || colon < 6) return "";
    int port = 0;
    if (std::sscanf(addr.c_str() + colon + 1, "%d", &port) != 1 || port <= 0 || port >= 65535) {
      return "";
    }
    return addr.substr(0, colon + 1) + std::to_string(port + 1);
  }
  return "";
}

}  // namespace hlox::proto
