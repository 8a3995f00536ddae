// The hlox broker: one ROUTER socket for agents and workers plus a control ROUTER that is polled
// first, in the ZeroMQ guide's Majordomo shape (one poll with the heartbeat interval as timeout,
// dispatch on the command byte, expire and heartbeat on a timer). It queues jobs per hardware
// class, leases them to workers under a per-worker credit, re-queues the leases of lost workers,
// poisons jobs that crash several workers, answers identical jobs from a result cache (and
// coalesces identical jobs in flight), and commits results to the store before acknowledging.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "broker/job_metrics.h"
#include "broker/result_store.h"
#include "broker/zap_handler.h"
#include "protocol/protocol.h"
#include "protocol/record_scan.h"
#include "protocol/zmq_util.h"

namespace hlox::broker {

// Liveness and reliability constants, together.
inline constexpr int kHeartbeatIntervalMs = 250;   // broker<->worker heartbeat period
inline constexpr int kHeartbeatLiveness = 4;       // silent intervals before a worker is lost
inline constexpr int kPoisonCrashes = 3;           // distinct crashed workers -> POISON
inline constexpr uint32_t kMaxAttempts = 8;        // dispatches before a job gives up (POISON)
inline constexpr int kLeaseGraceMs = 3000;         // worker reports its own timeouts first
inline constexpr size_t kDefaultMaxPending = 1000000;  // above this SUBMIT gets FULL
inline constexpr int kMaxRecvPerPoll = 4096;       // messages handled per socket per loop
inline constexpr int kDefaultSpinUs = 100;         // busy-poll after job traffic (spin_poll.h)

struct BrokerOptions {
  std::string bind = "tcp://127.0.0.1:5555";
  std::string control_bind;   // "" = proto::ControlAddressFor(bind)
  std::string db_path;        // "" = memory only
  // In-process agents (the embedded mode): the main ROUTER also binds this inproc:// address
  // in `context`, which the agents' sockets share, so their messages skip ZeroMQ's I/O threads
  // and the kernel. "" / null = none / a context of the broker's own.
  std::string inproc_bind;
  std::shared_ptr<zmq::context_t> context;
  int heartbeat_ms = kHeartbeatIntervalMs;
  int liveness = kHeartbeatLiveness;
  int poison_crashes = kPoisonCrashes;
  size_t max_pending = kDefaultMaxPending;
  // Bytes of finished result records kept in memory; beyond it the oldest committed ones are
  // dropped and read back from the store when a resubmit or a cache hit needs them. Only with a
  // durable store (memory-only keeps everything: there is nowhere to read them back from).
  size_t result_memory_bytes = size_t(256) << 20;
  uint32_t default_run_timeout_ms = proto::kDefaultRunTimeoutMs;
  // Busy-poll up to this long after sending a job or a result before blocking (0 = never).
  int spin_us = kDefaultSpinUs;
  // Spin only while this host has a core to spare beyond the broker and its local workers
  // that hold a job right now; otherwise the spin takes CPU from evaluations (false: always
  // spin).
  bool spin_needs_spare_core = true;
  // Bench baseline only: decode every DONE and result record fully (msgpack objects, copies)
  // instead of the bounded scan that reads just the fields the broker needs.
  bool full_record_decode = false;
  // Security: with curve_secret_file (Z85 secret key) both sockets are CURVE servers and only
  // clients whose public key is a *.pub file in allow_dir get in. Without it, binding to a
  // non-loopback address fails unless `insecure` is set.
  std::string curve_secret_file;
  std::string allow_dir;
  bool insecure = false;
};

class Broker {
 public:
  // Opens the store, reloads stored results and modules, binds both sockets.
  static absl::StatusOr<std::unique_ptr<Broker>> Create(const BrokerOptions& options);
  ~Broker();
  // Serves until a control "shutdown" or Stop(); returns the first fatal error.
  absl::Status Run();
  // Thread-safe: makes Run() return within one heartbeat interval.
  void Stop() { stop_.store(true); }
  const std::string& control_address() const { return control_addr_; }
  // Client keys with which this process can reach its own CURVE sockets (its own key pair,
  // always admitted); disabled when CURVE is off. For in-process helpers such as the monitor.
  const proto::CurveClientKeys& self_keys() const { return self_keys_; }
  // Status JSON (what the control "status" op returns). Only from the Run() thread.
  std::string StatusJson() const;

 private:
  struct Job {
    proto::SubmitMsg spec;          // module_text cleared
    std::string agent;              // identity results go to
    std::string cache_key;          // "" when caching is off
    std::string class_key;          // cache key under the class it was dispatched to, when that
                                    // differs (so twins pinned to that class coalesce with it)
    std::string job_class;          // class it queues under ("" = any)
    bool running = false;
    bool queued = false;            // has a live entry in queues_
    bool from_cache = false;        // answered by the result cache (RESULT cached = true)
    uint32_t attempts = 0;
    std::set<std::string> crashed_on;
    std::string worker;
    int64_t lease_deadline_ms = 0, enqueued_ms = 0, submitted_us = 0;
    int64_t enqueued_us = 0, dispatched_us = 0;  // last queued / leased (monitoring)
    std::vector<std::string> followers;  // coalesced identical jobs
  };
  struct Worker {
    std::string identity;
    proto::ReadyMsg caps;
    std::unordered_set<std::string> jobs;     // leased job ids
    std::unordered_set<std::string> modules;  // module hashes it has been sent
    int64_t last_seen_ms = 0, registered_ms = 0;
    int64_t done = 0, failed = 0;
    bool draining = false;
    bool local = false;                       // runs on this broker's host
  };
  struct DoneJob {
    std::string record, campaign, status;  // record is empty once dropped (in_store_only)
    uint32_t attempts = 0;
    bool committed = false;
    bool in_store_only = false;
  };
  struct Ack {
    std::string agent;
    proto::ResultMsg msg;
  };

  explicit Broker(const BrokerOptions& o) : opts_(o) {}

  // Loads keys, checks the bind rule and starts the ZAP handler (broker.cc).
  absl::Status SetUpSecurity();
  // Message handling (broker.cc).
  void HandleMessage(proto::Received& in, bool control_socket);
  void SendTo(const std::string& identity, proto::Command c, const std::string& body,
              bool to_worker);
  void SendError(const std::string& identity, std::string_view job_id, std::string_view code,
                 const std::string& message);
  // ERROR `code` to `identity` for a message that could not be taken; `job_id` when known.
  void Reject(const std::string& identity, std::string_view code, const std::string& message,
              std::string_view job_id = {});
  void FlushCompletions();
  // Inserts a finished job into done_ (unless its id is there already) and counts it per
  // campaign and status for the status reply; EraseDone undoes both.
  std::unordered_map<std::string, DoneJob>::iterator AddDone(std::string job_id, DoneJob d);
  void EraseDone(std::unordered_map<std::string, DoneJob>::iterator it);
  // Counts a committed record against result_memory_bytes, dropping the oldest beyond it.
  void KeepResident(const std::string& job_id, size_t bytes);
  // The record of a finished job, from memory or (when dropped) from the store.
  absl::StatusOr<std::string> RecordOf(const std::string& job_id, const DoneJob& d);
  void OnTimer(int64_t now_ms);
  // Time this thread did not run (the poll returned late, or handling took long) is not the
  // peers' silence: moves every worker's last_seen_ms and running lease forward by it.
  void ForgiveStall(int64_t stall_ms, int64_t now_ms);

  // Jobs and workers (broker_jobs.cc).
  void OnSubmit(const std::string& agent, std::string_view body);
  void OnReady(const std::string& identity, std::string_view body);
  void OnDone(const std::string& identity, std::string_view body);
  void OnNeedModule(const std::string& identity, std::string_view body);
  void Enqueue(Job& job, bool front);
  void Dispatch();
  bool Assign(Job& job, Worker& w);
  // Checks a worker's record and reads the fields the broker needs (record_scan.h).
  absl::StatusOr<proto::RecordSummary> SummarizeRecord(std::string_view record) const;
  // Finishes a job (and its coalesced twins) with `record`; `measured` summarizes the record
  // when it is a fresh result from a worker (it feeds the spread statistics).
  void Complete(const std::string& job_id, std::string record, JobStatus status,
                const proto::RecordSummary* measured = nullptr);
  void CompleteWith(const std::string& job_id, JobStatus status, const std::string& message);
  void RequeueOrPoison(const std::string& job_id, const std::string& worker_id, bool crashed);
  void LoseWorker(const std::string& identity, const char* why);
  void ReleaseCredit(Worker& w, const std::string& job_id);
  void ExpireJobs(int64_t now_ms);

  // Control (broker_status.cc).
  void OnControl(const std::string& identity, std::string_view body, bool control_socket);
  // Counts a finished job (status wire name, seconds since its SUBMIT) for status and metrics.
  void RecordFinished(const std::string& status, double seconds);
  // Remembers the relative spread (MAD/median) of a measured OK record for the metrics.
  void RecordSpread(const proto::RecordSummary& record);

  BrokerOptions opts_;
  std::atomic<bool> stop_{false};
  bool shutdown_ = false;
  uint64_t instance_ = 0;
  int64_t started_ms_ = 0;           // steady clock, for uptime
  double start_time_unix_s_ = 0;     // wall clock, for hlox_process_start_time_seconds
  std::string control_addr_;
  std::shared_ptr<zmq::context_t> ctx_;
  std::unique_ptr<ZapHandler> zap_;
  proto::CurveClientKeys self_keys_;
  std::unique_ptr<zmq::socket_t> front_, control_;
  std::unique_ptr<ResultStore> store_;

  std::unordered_map<std::string, std::unique_ptr<Job>> jobs_;  // pending or running
  std::unordered_map<std::string, DoneJob> done_;
  std::deque<std::pair<std::string, size_t>> resident_;  // committed records in memory, oldest first
  size_t resident_bytes_ = 0;
  std::unordered_map<std::string, int64_t> done_by_campaign_, done_by_status_;  // counts of done_
  std::unordered_map<std::string, std::string> cache_;          // cache key -> done job id
  std::unordered_map<std::string, std::string> inflight_keys_;  // cache key -> primary job id
  std::unordered_map<std::string, Worker> workers_;
  std::unordered_map<std::string, std::deque<std::string>> queues_;  // class -> job ids
  std::unordered_map<std::string, std::deque<std::string>> ready_;   // class -> worker slots
  std::unordered_map<std::string, std::string> campaign_class_;
  std::unordered_set<std::string> cancelled_;
  std::unordered_map<std::string, std::string> modules_;        // hash -> text
  std::vector<StoredResult> to_commit_;
  std::vector<Ack> acks_;
  size_t pending_count_ = 0, running_count_ = 0;
  int64_t job_sends_ = 0;  // JOB and RESULT messages sent (arms the spin in Run)
  std::string host_;       // this host's name, to count local workers
  int cores_ = 1;          // online CPUs of this host
  int local_busy_ = 0;     // workers on this host holding at least one leased job
  // No lease or queue wait can expire before this (ms): ExpireJobs skips its scan until then.
  int64_t next_expiry_ms_ = 0;

  // Statistics for status.
  JobMetrics job_metrics_;  // cumulative (job_metrics.h)
  int64_t completed_total_ = 0, cache_hits_ = 0, rejected_ = 0, requeued_ = 0, lost_workers_ = 0;
  int64_t store_reads_ = 0;     // dropped records read back from the store
  int64_t lease_expiries_ = 0;  // leases ended by a lost worker or a run timeout
  int64_t rejected_logged_at_ = 0;
  std::vector<double> latencies_;  // ring of recent submit->result seconds (status percentiles)
  std::vector<double> spreads_;    // ring of recent MAD/median of measured costs
  size_t spread_next_ = 0;
  // Workers lost recently (shown as state "lost" in status until they rejoin or 10 minutes pass).
  std::vector<std::pair<int64_t, Worker>> lost_recent_;
  size_t latency_next_ = 0;
  int64_t tput_bucket_[16] = {};   // completions per second, ring by second
  int64_t tput_second_[16] = {};
};

}  // namespace hlox::broker
