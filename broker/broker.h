// The hlox broker: one ROUTER socket for agents and workers plus a control ROUTER that is polled
// first, in the ZeroMQ guide's Majordomo shape (one poll with the heartbeat interval as timeout,
// dispatch on the command byte, expire and heartbeat on a timer). It queues jobs per hardware
// class, leases them to workers under a per-worker credit, re-queues the leases of lost workers,
// poisons jobs that crash several workers, answers identical jobs from a result cache (and
// coalesces identical jobs in flight), and commits results to the store before acknowledging.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "broker/broker_stats.h"
#include "broker/campaign_owners.h"
#include "broker/done_reader.h"
#include "broker/job_queue.h"
#include "broker/key_roles.h"
#include "broker/result_cache.h"
#include "broker/result_store.h"
#include "broker/worker_registry.h"
#include "broker/zap_handler.h"
#include "protocol/protocol.h"
#include "protocol/zmq_util.h"

namespace hlox::broker {

// Liveness and reliability constants, together (the job limits are in job_queue.h).
inline constexpr int kHeartbeatIntervalMs = 250;   // broker<->worker heartbeat period
inline constexpr int kHeartbeatLiveness = 4;       // silent intervals before a worker is lost
inline constexpr size_t kDefaultMaxPending = 1000000;  // above this SUBMIT gets FULL
inline constexpr int kMaxRecvPerPoll = 4096;       // messages handled per socket per loop
inline constexpr int kDefaultSpinUs = 100;         // busy-poll after job traffic (spin_poll.h)

struct BrokerOptions {
  std::string bind = "tcp://127.0.0.1:5555";
  std::string control_bind;   // "" = proto::ControlAddressFor(bind)
  std::string db_path;        // "" = memory only
  uint64_t db_max_bytes = 0;  // > 0: the store stops growing here, as on a full disk (STORE_FULL)
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
  // Security: with curve_secret_file (Z85 secret key) both sockets are CURVE servers and only
  // clients whose public key is a *.pub file in allow_dir (or its worker/, agent/, admin/
  // subfolders, which give the key's role: key_roles.h) get in. Without it every peer is trusted
  // as admin, and binding to a non-loopback address fails unless `insecure` is set.
  std::string curve_secret_file;
  std::string allow_dir;
  bool insecure = false;
};

// The socket loop that wires the broker's parts: JobQueue (jobs, queues, leases), WorkerRegistry
// (workers, credit, modules sent), ResultCache (finished jobs, cache, coalescing, resident
// records), BrokerStats (counters, rings, metrics) and the ResultStore.
class Broker {
 public:
  // Opens the store, reloads stored results and modules, binds both sockets. `done_reader`
  // reads workers' DONE messages (null: the bounded scan, ScanDoneReader).
  static absl::StatusOr<std::unique_ptr<Broker>> Create(
      const BrokerOptions& options, std::unique_ptr<DoneReader> done_reader = nullptr);
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
  // Async-signal-safe: asks Run() to re-read the allow folder (the SIGHUP handler calls it).
  void RequestReload() { reload_requested_.store(true); }
  // Re-reads the allow folder into the ZAP list and the role table, logging the counts per role;
  // on an error keeps the old list and returns why. Only from the Run() thread (or before it).
  absl::Status ReloadAllowList();

 private:
  struct Ack {
    std::string agent;
    proto::ResultMsg msg;
  };
  // The store's health as the last commit found it. While a commit fails the finished results
  // stay in to_commit_ and their RESULTs in acks_ (nothing is acknowledged), the commit is
  // retried once per heartbeat interval, and while the disk is full SUBMIT gets STORE_FULL.
  struct StoreHealth {
    bool full = false;           // the last commit failed for lack of disk space
    std::string error;           // the last commit's error; "" while commits succeed
    int64_t failing_since_ms = 0;
    int64_t retry_at_ms = 0;     // no commit attempt before this
    int64_t failed_commits = 0;  // since the broker started
    int64_t refused_submits = 0; // SUBMITs answered STORE_FULL since the broker started
  };

  Broker(const BrokerOptions& o, std::unique_ptr<ResultStore> store, std::string host);

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
  // Commits finished results to the store, then sends their RESULTs (broker.cc). While the
  // store is failing, tries at most once per heartbeat interval and sends nothing meanwhile.
  void FlushCompletions();
  // Records a failed commit in store_health_ and logs it (once per state change and then
  // every 10 s).
  void NoteCommitFailure(const absl::Status& st, int64_t now_ms);
  void OnTimer(int64_t now_ms);
  // Time this thread did not run (the poll returned late, or handling took long) is not the
  // peers' silence: moves every worker's last_seen_ms and running lease forward by it.
  void ForgiveStall(int64_t stall_ms, int64_t now_ms);

  // SUBMIT, in steps (broker_submit.cc). Each returns true when it answered the job.
  void OnSubmit(const std::string& agent, std::string_view body);
  // A job id that finished already: its stored result again (idempotent resubmit).
  bool AnswerFinished(const std::string& agent, const std::string& id);
  // Checks the module hash, stores a new module text and clears it from `m`; false (with an
  // ERROR sent) when the text does not match or the broker lacks the module.
  bool AdmitModule(const std::string& agent, proto::SubmitMsg& m);
  // Adds the job to the queue's table, under its campaign's class.
  Job& AddJob(const std::string& agent, proto::SubmitMsg m);
  // A cache hit or an identical job in flight (coalesced) answers `job`.
  bool AnswerFromCache(Job& job);

  // Workers and leases (broker_jobs.cc).
  void OnReady(const std::string& identity, std::string_view body);
  void OnDone(const std::string& identity, std::string_view body);
  void OnNeedModule(const std::string& identity, std::string_view body);
  void Dispatch();
  void Assign(Job& job, Worker& w);
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

  // Access (broker_access.cc). Sets peer_key_ and peer_roles_ for the message being handled.
  void IdentifyPeer(const proto::Received& in);
  // True when the current peer holds `needed`; otherwise answers ERROR FORBIDDEN (with the job
  // id of `submit_body` when given), counts the refusal under `op` and returns false.
  bool Permit(Role needed, const std::string& identity, const char* op,
              std::string_view submit_body = {});
  void CountForbidden(const std::string& op, const char* reason);
  // Why the current peer may not run control `op` on `target` ("" = allowed; the reason key of
  // the refusal counter goes to *reason).
  std::string ControlRefusal(const std::string& op, const std::string& target,
                             std::string* reason) const;
  // Checks SUBMIT's campaign against its owner and claims an unowned one for the current key;
  // false (ERROR FORBIDDEN sent) when another key owns it.
  bool CheckCampaignOwner(const std::string& agent, const proto::SubmitMsg& m);

  BrokerOptions opts_;
  std::atomic<bool> stop_{false};
  bool shutdown_ = false;
  uint64_t instance_ = 0;
  int64_t started_ms_ = 0;           // steady clock, for uptime
  double start_time_unix_s_ = 0;     // wall clock, for hlox_process_start_time_seconds
  std::string control_addr_;
  std::shared_ptr<zmq::context_t> ctx_;
  std::unique_ptr<ZapHandler> zap_;
  KeyRoles roles_;                             // with CURVE: the allow folder's keys and roles
  std::unique_ptr<CampaignOwners> owners_;
  std::atomic<bool> reload_requested_{false};
  // The peer of the message being handled: its key (Z85, "" without CURVE) and roles. The key
  // points into the message's metadata, valid while HandleMessage runs.
  std::string_view peer_key_;
  uint8_t peer_roles_ = kRoleAll;
  proto::CurveClientKeys self_keys_;
  std::unique_ptr<zmq::socket_t> front_, control_;
  std::unique_ptr<ResultStore> store_;
  std::unique_ptr<DoneReader> done_reader_;

  // The parts.
  JobQueue queue_;
  WorkerRegistry workers_;
  ResultCache results_;
  BrokerStats stats_;

  std::unordered_map<std::string, std::string> modules_;  // text hash -> module text
  std::vector<StoredResult> to_commit_;  // finished, not yet in the store
  std::vector<Ack> acks_;                // RESULTs to send once to_commit_ is in the store
  StoreHealth store_health_;
  int64_t store_logged_at_ = 0;
  int64_t job_sends_ = 0;  // JOB and RESULT messages sent (arms the spin in Run)
  int cores_ = 1;          // online CPUs of this host
  int64_t rejected_logged_at_ = 0;
};

}  // namespace hlox::broker
