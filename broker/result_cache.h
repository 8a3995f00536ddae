// The broker's finished jobs and its result cache: job id -> finished job (status, campaign,
// record), cache key -> the finished job that answers it, cache key -> the job in flight that
// twins coalesce with, and the records kept in memory: committed records count against a byte
// budget and the oldest beyond it are dropped from memory and read back from the store when a
// resubmit or a cache hit needs them. No sockets; tested directly on a ResultStore.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "broker/result_store.h"
#include "cost/result.h"

namespace hlox::broker {

struct DoneJob {
  std::string record, campaign, status;  // record is empty once dropped (in_store_only)
  uint32_t attempts = 0;
  bool committed = false;
  bool in_store_only = false;
};

class ResultCache {
 public:
  // Reads dropped records back from `store` (not owned, outlives this); keeps committed records
  // in memory up to `memory_bytes`.
  ResultCache(ResultStore* store, size_t memory_bytes) : store_(store), memory_bytes_(memory_bytes) {}

  // Loads every result in the store as finished, committed and cached under its stored key.
  absl::Status Reload();

  // Adds a finished job unless its id is finished already; counts it per campaign and status.
  void AddDone(const std::string& job_id, DoneJob d);
  const DoneJob* FindDone(const std::string& job_id) const;
  // Forgets a finished job (its stored record could not be read: it runs again).
  void Forget(const std::string& job_id);
  // The record of a finished job, from memory or (when dropped) from the store; NotFound when
  // the job is not finished.
  absl::StatusOr<std::string> RecordOf(const std::string& job_id);
  // The job's record is in the store now: it counts against the memory budget, and the oldest
  // committed records beyond it are dropped from memory.
  void MarkCommitted(const std::string& job_id);

  // A cached answer: the finished job's record and status.
  struct Hit {
    std::string record;
    JobStatus status = JobStatus::kOk;
  };
  // The answer cached under `key`, or nullopt (no entry, or its record could not be read).
  std::optional<Hit> Lookup(const std::string& key);
  // Caches `job_id` (finished, or about to be) under `key`.
  void Remember(const std::string& key, const std::string& job_id) { cache_[key] = job_id; }

  // The job in flight under `key` that identical jobs coalesce with, or null.
  const std::string* InFlight(const std::string& key) const;
  // Makes `job_id` the job in flight under `key`, replacing any entry when `replace`; false when
  // another entry was kept.
  bool SetInFlight(const std::string& key, const std::string& job_id, bool replace);
  // Removes `key`'s in-flight entry if it is `job_id`'s.
  void EndInFlight(const std::string& key, const std::string& job_id);

  size_t done_count() const { return done_.size(); }
  size_t resident_bytes() const { return resident_bytes_; }
  int64_t store_reads() const { return store_reads_; }
  using Counts = absl::flat_hash_map<std::string, int64_t>;
  const Counts& done_by_campaign() const { return by_campaign_; }
  const Counts& done_by_status() const { return by_status_; }

 private:
  void KeepResident(const std::string& job_id, size_t bytes);

  ResultStore* store_;
  size_t memory_bytes_;
  // Every finished job: the largest table, looked up per SUBMIT and written per result. Nodes,
  // so FindDone's pointer survives later inserts.
  absl::node_hash_map<std::string, DoneJob> done_;
  Counts by_campaign_, by_status_;  // counts of done_
  absl::flat_hash_map<std::string, std::string> cache_;      // cache key -> done job id
  absl::flat_hash_map<std::string, std::string> inflight_;   // cache key -> primary job id
  std::deque<std::pair<std::string, size_t>> resident_;     // committed in memory, oldest first
  size_t resident_bytes_ = 0;
  int64_t store_reads_ = 0;  // dropped records read back from the store
};

}  // namespace hlox::broker
