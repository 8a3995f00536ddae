// The hlox wire protocol: every message between agents, the broker, workers and the control
// channel, its limits and its error codes, in one place. docs/PROTOCOL.md is the same content
// for other languages. A message is two ZeroMQ frames: a 4-byte header 'H' 'X' <version byte 1>
// <command byte> and a msgpack map body; a receiver also takes a lone header frame as a message
// with an empty body (heartbeats, REREGISTER, DISCONNECT). Decoders refuse trailing bytes, missing required
// keys, wrong types and anything over the limits below, and never allocate more than the frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/decisions.h"
#include "cost/eval_options.h"
#include "cost/result.h"

namespace hlox::proto {

inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kMaxMessageBytes = 48u << 20;  // ZMQ_MAXMSGSIZE on every socket
inline constexpr size_t kMaxModuleBytes = 32u << 20;   // HLO text of one module
inline constexpr size_t kMaxDecisions = 1u << 20;      // int32 choices over all invocations
inline constexpr size_t kMaxInvocations = 1024;        // entries in a decisions map
inline constexpr size_t kMaxNameBytes = 256;           // ids, campaigns, classes
inline constexpr size_t kMaxPipelineBytes = 4096;      // pipelines ("seq:" names a whole sequence)
inline constexpr size_t kMaxTextBytes = 1u << 20;      // messages, JSON, record strings
inline constexpr size_t kMaxSamples = 1u << 16;        // cost samples in a record
inline constexpr int kMaxDepth = 4;                    // msgpack nesting
inline constexpr size_t kMaxSitesBytes = 8u << 20;     // a record's "sites" JSON (sites jobs)

// Job kinds: SUBMIT/JOB "kind" (absent = evaluate). The broker checks only that a kind is known,
// copies its fields into the JOB and keys its cache by them; the worker dispatches on it.
inline constexpr char kKindEvaluate[] = "evaluate";  // build and measure one candidate (the RECORD's cost)
// List the decision points and sites of the module under the pipeline given the decisions so
// far (the RECORD's "sites"); nothing is run.
inline constexpr char kKindSites[] = "sites";
inline constexpr char kKindPaired[] = "paired";      // measure a candidate against a baseline, paired
// True for every kind above.
bool IsKnownKind(std::string_view kind);
// Whether the broker may answer a job of `kind` from its result cache (or coalesce it with a
// twin in flight): false for paired jobs, whose answer is a fresh measurement by definition.
bool KindCacheable(std::string_view kind);

// Command byte, the 4th byte of the header frame.
enum class Command : uint8_t {
  kSubmit = 'S',        // agent -> broker: SubmitMsg
  kResult = 'R',        // broker -> agent: ResultMsg
  kError = 'E',         // broker/worker -> sender: ErrorMsg
  kHeartbeat = 'H',     // both ways: HeartbeatMsg (broker->peer carries the instance id)
  kReady = 'W',         // worker -> broker: ReadyMsg (register)
  kJob = 'J',           // broker -> worker: JobMsg
  kDone = 'D',          // worker -> broker: DoneMsg
  kNeedModule = 'M',    // worker -> broker: NeedModuleMsg (module cache miss)
  kReregister = 'A',    // broker -> worker: unknown worker, send READY again (empty body)
  kDisconnect = 'X',    // broker -> worker: exit cleanly (drained or broker shutdown)
  kControl = 'C',       // control client -> broker: ControlMsg
  kControlReply = 'c',  // broker -> control client: ControlReplyMsg
};
bool IsKnownCommand(uint8_t c);

// Error codes carried by ErrorMsg::code.
inline constexpr char kErrBadFrame[] = "BAD_FRAME";        // frame count/header wrong
inline constexpr char kErrBadVersion[] = "BAD_VERSION";    // protocol version differs
inline constexpr char kErrUnknownCommand[] = "UNKNOWN_COMMAND";
inline constexpr char kErrDecode[] = "DECODE";             // body not a valid message
inline constexpr char kErrLimit[] = "LIMIT";               // over a limit above
inline constexpr char kErrFull[] = "FULL";                 // queue full: retry later
inline constexpr char kErrUnknownModule[] = "UNKNOWN_MODULE";  // resend with module
inline constexpr char kErrBadModule[] = "BAD_MODULE";      // text does not match hash
inline constexpr char kErrNotWorker[] = "NOT_WORKER";      // worker command, no READY
inline constexpr char kErrForbidden[] = "FORBIDDEN";       // key's role or campaign owner says no
// The broker's result store cannot take more results (its disk is full): SUBMIT later. Results
// already finished are held in memory, unacknowledged, until the store takes them.
inline constexpr char kErrStoreFull[] = "STORE_FULL";

// The extra fields of a paired job: the baseline it is measured against, and how. The candidate
// is the job's own pipeline and decisions.
struct PairedSpec {
  std::string baseline_pipeline;        // "" = the job's pipeline
  PipelineDecisions baseline_decisions; // {} = the baseline pipeline's default policy
  uint64_t seed = 0;                    // inputs and instance order (MeasurePairedModules)
  // What of the TimingProtocol travels (the rest keeps its defaults): warmups, min/max rounds
  // (min_samples, max_samples), target_rel_error, time_cap_seconds (ms on the wire),
  // min_sample_seconds (us on the wire), paired_instances.
  TimingProtocol protocol;
};

// The run timeout of a job that names none, when the broker is not configured otherwise, and of a
// JOB whose run_timeout_ms is 0.
inline constexpr uint32_t kDefaultRunTimeoutMs = 120000;

struct SubmitMsg {
  std::string job_id;            // client-chosen, unique; resubmitting is idempotent
  std::string campaign;          // jobs of a campaign run on one hardware class
  std::string module_hash;       // TextHash(module_text): the text's address, not its identity
  std::string module_text;       // optional: needed once per module per broker
  std::string pipeline;
  PipelineDecisions decisions;   // wire: map str -> bin of little-endian int32
  std::string hardware_class;    // optional: pin the campaign to this class
  uint32_t queue_timeout_ms = 0; // 0 = none
  uint32_t run_timeout_ms = 0;   // 0 = the broker's default (kDefaultRunTimeoutMs unless configured)
  bool use_cache = true;         // false: always evaluate (benchmarks, re-measurements)
  std::string kind = kKindEvaluate;  // a kKind*; unknown kinds are refused (DECODE)
  PairedSpec paired;             // kind "paired" only
};

struct ResultMsg {
  std::string job_id;
  uint32_t attempts = 0;         // dispatches it took (0 = answered from cache/store)
  bool cached = false;           // answered by the result cache or a coalesced twin
  std::string record;            // msgpack bytes of the ResultRecord (EncodeRecord)
};

struct ErrorMsg {
  std::string job_id;            // the job it concerns, "" if none
  std::string code;              // one of kErr*
  std::string message;
};

struct HeartbeatMsg {
  uint64_t instance = 0;         // broker instance id; changes when the broker restarts
};

struct ReadyMsg {
  std::string worker_id, host, hardware_class, version;  // class: ends in its ISA level
  uint32_t cores = 0, threads = 0;
  uint32_t credit = 1;           // jobs the broker may have outstanding on this worker
  std::string cpu{};             // CPU model name; "" from workers that predate it
  std::string isa{};             // ISA level its kernels run at (IsaName); "" likewise
  // Protocol version the worker speaks (absent on the wire: the header's, which passed the
  // check). The broker refuses a READY whose version is not its own with kErrBadVersion.
  uint32_t protocol = kVersion;
  std::string build{};           // build id (common/build_info.h); "" from workers that predate it
};

struct JobMsg {
  std::string job_id;
  uint32_t attempt = 0;
  std::string module_hash;
  std::string module_text;       // empty when the broker believes the worker has it
  std::string pipeline;
  PipelineDecisions decisions;
  uint32_t run_timeout_ms = 0;
  std::string kind = kKindEvaluate;  // copied from the SUBMIT
  PairedSpec paired;             // kind "paired" only
};

struct DoneMsg {
  std::string job_id;
  uint32_t attempt = 0;
  bool crashed = false;          // the evaluation killed its process: counts toward POISON
  std::string record;            // msgpack ResultRecord (valid also when crashed)
};

struct NeedModuleMsg {
  std::string job_id;
  uint32_t attempt = 0;
  std::string module_hash;
};

struct ControlMsg {
  std::string op;                // "status" | "drain" | "cancel" | "shutdown"
  std::string target;            // worker id (drain) or campaign (cancel)
};

struct ControlReplyMsg {
  bool ok = false;
  std::string message;           // error text when !ok
  std::string json;              // status JSON for "status"
};

// A received message split by SplitFrames (protocol/frames.h): its command and raw body,
// before typed decoding.
struct Frames {
  Command command;
  std::string_view body;
};

// Checks the header frame and returns the command. Errors: kErrBadFrame, kErrBadVersion,
// kErrUnknownCommand (as the status message prefix "CODE: ...").
absl::StatusOr<Command> ParseHeader(std::string_view header);
std::string MakeHeader(Command c);

std::string Encode(const SubmitMsg& m);
std::string Encode(const ResultMsg& m);
std::string Encode(const ErrorMsg& m);
std::string Encode(const HeartbeatMsg& m);
std::string Encode(const ReadyMsg& m);
std::string Encode(const JobMsg& m);
std::string Encode(const DoneMsg& m);
std::string Encode(const NeedModuleMsg& m);
std::string Encode(const ControlMsg& m);
std::string Encode(const ControlReplyMsg& m);

// Each decoder: InvalidArgument on malformed input (bad msgpack, trailing bytes, wrong types,
// missing required keys), ResourceExhausted when a limit is exceeded. Never throws.
absl::StatusOr<SubmitMsg> DecodeSubmit(std::string_view body);
// The "id" of a SUBMIT whose decoding failed for another reason, so that its ERROR can name the
// job; "" when the body is no map or has no usable id.
std::string PeekJobId(std::string_view body);
absl::StatusOr<ResultMsg> DecodeResult(std::string_view body);
absl::StatusOr<ErrorMsg> DecodeError(std::string_view body);
absl::StatusOr<HeartbeatMsg> DecodeHeartbeat(std::string_view body);
absl::StatusOr<ReadyMsg> DecodeReady(std::string_view body);
absl::StatusOr<JobMsg> DecodeJob(std::string_view body);
absl::StatusOr<DoneMsg> DecodeDone(std::string_view body);
absl::StatusOr<NeedModuleMsg> DecodeNeedModule(std::string_view body);
absl::StatusOr<ControlMsg> DecodeControl(std::string_view body);
absl::StatusOr<ControlReplyMsg> DecodeControlReply(std::string_view body);

// The error code of a decode status: kErrLimit for ResourceExhausted, else kErrDecode.
const char* ErrorCodeFor(const absl::Status& s);

// ResultRecord <-> msgpack map (layout in docs/PROTOCOL.md "RECORD").
std::string EncodeRecord(const ResultRecord& r);
absl::StatusOr<ResultRecord> DecodeRecord(std::string_view bytes);
// Status names on the wire ("OK", "WRONG_OUTPUT", ...), independent of cost/.
std::string_view StatusWireName(JobStatus s);
std::optional<JobStatus> ParseStatusWireName(std::string_view s);

// The address of a module text on the wire (SUBMIT/JOB/NEED_MODULE "module_hash", a record's
// "text_hash"): HashText (cost/module_hash.h) of the exact bytes, 32 lowercase hex digits.
// Not the module's identity: records carry that as module_hash (ModuleHash of the parsed module).
std::string TextHash(std::string_view text);

// Cache key of an evaluation: (module hash, pipeline, decisions, hardware class, protocol version).
std::string CacheKey(const std::string& module_hash, const std::string& pipeline,
                     const PipelineDecisions& decisions, const std::string& hardware_class);
// Cache key of a submitted job on `hardware_class`: the key above for an evaluation (so stored
// keys stay valid), and for other kinds one that also covers the kind and its fields, so two
// kinds never share an answer.
std::string CacheKey(const SubmitMsg& job, const std::string& hardware_class);

// The control address that goes with a broker bind/connect address: tcp port + 1, or the ipc
// path with ".ctl" appended. Empty when `addr` is neither.
std::string ControlAddressFor(const std::string& addr);

}  // namespace hlox::proto
