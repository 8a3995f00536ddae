// The broker's jobs between SUBMIT and their result: the job table, one FIFO queue per hardware
// class, leases with deadlines, queue-wait and lease expiry, re-queue at the front, the crash
// count that ends a job POISON, campaign class pins and cancelled campaigns. Pure bookkeeping:
// no sockets, no clock of its own (every time is an argument), so it is tested directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "broker/job.h"

namespace hlox::broker {

inline constexpr int kPoisonCrashes = 3;           // distinct crashed workers -> POISON
inline constexpr uint32_t kMaxAttempts = 8;        // dispatches before a job gives up (POISON)
inline constexpr int kLeaseGraceMs = 3000;         // worker reports its own timeouts first

// Whether a job's class leaves the level open: empty (any worker) or bare ("cpu": that class
// at any level, protocol/hardware_class.h). Such a job takes the class of the worker that runs
// it, and a campaign of such jobs is pinned to the first class one runs on.
bool OpenClass(const std::string& job_class);

class JobQueue {
 public:
  explicit JobQueue(int poison_crashes = kPoisonCrashes) : poison_crashes_(poison_crashes) {}

  // The job with this id (pending or running), or null.
  Job* Find(const std::string& id);
  // Takes `job` into the table, neither queued nor running. Requires its id to be new.
  Job& Add(std::unique_ptr<Job> job);
  // Takes the job out of the table (its queue entry is skipped lazily); null when unknown.
  std::unique_ptr<Job> Remove(const std::string& id);

  // The class a campaign's jobs queue under: its pin, else `requested` (which pins the campaign
  // now when it names a level). "" campaign: `requested`, no pin.
  std::string ClassFor(const std::string& campaign, const std::string& requested);

  // Queues `job` under its class at the back (or the front, for re-queues) at `now_us`.
  void Enqueue(Job& job, bool front, int64_t now_us);

  // What Take found for a worker.
  struct Taken {
    Job* job = nullptr;     // leave it to Lease; null when nothing fits
    bool skipped = false;   // jobs were passed over because they crashed this worker before
  };
  // The next job for a worker of class `worker_class` (identity `worker`, one of `live_workers`):
  // from its class queue, then its class's bare queue, then the any-class queue. A job that
  // crashed this worker is left for another while others are registered; an open-class job pins
  // its campaign to `worker_class`, or moves to its campaign's pinned queue. The job is taken
  // off its queue; call Lease next.
  Taken Take(const std::string& worker_class, const std::string& worker, size_t live_workers,
             int64_t now_us);
  // Whether any queue that serves `worker_class` still has entries (maybe stale ones).
  bool HasQueued(const std::string& worker_class) const;

  // Leases `job` to `worker` at `now_ms` for `run_ms` plus kLeaseGraceMs; counts the attempt.
  void Lease(Job& job, const std::string& worker, int64_t now_ms, uint32_t run_ms);

  // How a lease ended that was not a result.
  enum class Release { kNotLeased, kRequeued, kPoison };
  // Ends the lease of `id` held by `worker` (`crashed`: it died with it). kPoison: it crashed
  // poison_crashes workers or ran out of attempts (finish it); kRequeued: at the front of its
  // queue; kNotLeased: `worker` does not hold it (stale), nothing changed.
  Release EndLease(const std::string& id, const std::string& worker, bool crashed, int64_t now_us);

  // The jobs whose lease or queue wait ended before `now_ms`: (id, was running). Skips the scan
  // until the earliest deadline can have passed.
  std::vector<std::pair<std::string, bool>> Expired(int64_t now_ms);
  // Moves every running lease's deadline `stall_ms` later (the broker did not run).
  void ExtendLeases(int64_t stall_ms);

  // Marks `campaign` cancelled (later SUBMITs of it finish CANCELLED) and returns the ids of its
  // jobs in the table now.
  std::vector<std::string> Cancel(const std::string& campaign);
  bool Cancelled(const std::string& campaign) const { return cancelled_.count(campaign) > 0; }

  size_t pending() const { return pending_; }
  size_t running() const { return running_; }
  // Open addressing: the table is looked up several times per job, and it holds every job in
  // flight. Values are pointers, so a Job stays put when the table grows.
  using Table = absl::flat_hash_map<std::string, std::unique_ptr<Job>>;
  const Table& jobs() const { return jobs_; }

 private:
  // The queues a worker of class `cls` takes jobs from, in order (built once per class).
  const std::vector<std::string>& QueuesServing(const std::string& cls) const;

  int poison_crashes_;
  Table jobs_;  // pending or running
  absl::flat_hash_map<std::string, std::deque<std::string>> queues_;  // class -> job ids
  std::unordered_map<std::string, std::string> campaign_class_;
  std::unordered_set<std::string> cancelled_;
  mutable std::unordered_map<std::string, std::vector<std::string>> serving_;  // QueuesServing's
  size_t pending_ = 0, running_ = 0;
  // No lease or queue wait can expire before this (ms): Expired skips its scan until then.
  int64_t next_expiry_ms_ = 0;
};

}  // namespace hlox::broker
