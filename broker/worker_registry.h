// The broker's registered workers: capabilities from READY, the jobs each holds, its ready
// slots (one per unit of credit not in use, queued per hardware class), the modules each has
// been sent, liveness, and the workers lost recently (kept for the status reply). No sockets and
// no clock of its own, so it is tested directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "protocol/protocol.h"

namespace hlox::broker {

struct Worker {
  std::string identity;
  proto::ReadyMsg caps;
  absl::flat_hash_set<std::string> jobs;     // leased job ids
  absl::flat_hash_set<std::string> modules;  // module hashes it has been sent
  int64_t last_seen_ms = 0, registered_ms = 0;
  int64_t done = 0, failed = 0;
  bool draining = false;
  bool local = false;                       // runs on this broker's host
};

class WorkerRegistry {
 public:
  // `host`: this broker's host name; workers that report it count as local.
  explicit WorkerRegistry(std::string host) : host_(std::move(host)) {}

  // Registers `identity` with `caps` at `now_ms` and gives it `caps.credit` ready slots.
  // Requires that it is not registered (Lose it first).
  Worker& Register(const std::string& identity, proto::ReadyMsg caps, int64_t now_ms);
  Worker* Find(const std::string& identity);
  // The worker whose worker id or identity is `name`, or null.
  Worker* FindByName(const std::string& name);
  // Removes a lost worker, remembering it for status; returns the jobs it held.
  std::vector<std::string> Lose(const std::string& identity, int64_t now_ms);
  // Removes a worker that left cleanly (drained).
  void Remove(const std::string& identity);

  // Records that `w` holds `job_id`.
  void AddLease(Worker& w, const std::string& job_id);
  // `w` no longer holds `job_id`: frees its slot (unless draining). True when `w` is draining
  // and now holds nothing, so it may be told to go (the caller sends DISCONNECT and Removes it).
  bool EndLease(Worker& w, const std::string& job_id);
  // Whether `w` must be sent the text of `module_hash` (true once, then it is assumed to have it).
  bool NeedsModule(Worker& w, const std::string& module_hash);
  // `w` asked for `module_hash`: it no longer has it.
  void ForgetModule(Worker& w, const std::string& module_hash) { w.modules.erase(module_hash); }

  // The ready slots per hardware class (worker identities, one per free unit of credit);
  // entries of lost, draining or full workers are stale: NextReady skips them.
  std::unordered_map<std::string, std::deque<std::string>>& ready() { return ready_; }
  // The worker at the front of `slots` that can take a job, dropping stale entries before it;
  // null when none is left.
  Worker* NextReady(std::deque<std::string>& slots);

  // Identities of the workers silent for more than `expiry_ms` at `now_ms`.
  std::vector<std::string> Silent(int64_t now_ms, int64_t expiry_ms) const;
  // Moves every worker's last_seen_ms `stall_ms` later (not past `now_ms`).
  void Forgive(int64_t stall_ms, int64_t now_ms);
  std::vector<std::string> Identities() const;

  size_t size() const { return workers_.size(); }
  // Local workers that hold at least one job.
  int local_busy() const { return local_busy_; }
  // Nodes: a Worker& stays valid while others register.
  using Table = absl::node_hash_map<std::string, Worker>;
  const Table& workers() const { return workers_; }
  // Workers lost recently, oldest first (at most kLostKept): (time lost, last state).
  const std::deque<std::pair<int64_t, Worker>>& lost_recent() const { return lost_recent_; }
  static constexpr size_t kLostKept = 256;

 private:
  std::string host_;
  Table workers_;
  std::unordered_map<std::string, std::deque<std::string>> ready_;  // class -> worker slots
  std::deque<std::pair<int64_t, Worker>> lost_recent_;
  int local_busy_ = 0;
};

}  // namespace hlox::broker
