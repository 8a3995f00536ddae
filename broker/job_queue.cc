// Job table, class queues, leases and expiry; see job_queue.h.
#include "broker/job_queue.h"

#include <algorithm>

#include "protocol/hardware_class.h"

namespace hlox::broker {

bool OpenClass(const std::string& job_class) {
  return job_class.empty() || !proto::HardwareClassIsa(job_class).has_value();
}

// Its class, that class without its level (bare pins), then jobs for any class.
const std::vector<std::string>& JobQueue::QueuesServing(const std::string& cls) const {
  auto it = serving_.find(cls);
  if (it != serving_.end()) return it->second;
  std::vector<std::string> names{cls};
  const std::string base(proto::HardwareClassBase(cls));
  if (base != cls) names.push_back(base);
  if (!cls.empty()) names.emplace_back();
  if (serving_.size() >= 256) serving_.clear();  // classes are few; bound what odd names cost
  return serving_.emplace(cls, std::move(names)).first->second;
}

Job* JobQueue::Find(const std::string& id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

Job& JobQueue::Add(std::unique_ptr<Job> job) {
  const std::string id = job->spec.job_id;
  return *jobs_.emplace(id, std::move(job)).first->second;
}

std::unique_ptr<Job> JobQueue::Remove(const std::string& id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return nullptr;
  std::unique_ptr<Job> job = std::move(it->second);
  jobs_.erase(it);
  if (job->running) --running_;
  if (job->queued) --pending_;  // its queue entry is skipped lazily
  return job;
}

std::string JobQueue::ClassFor(const std::string& campaign, const std::string& requested) {
  if (campaign.empty()) return requested;
  if (auto c = campaign_class_.find(campaign); c != campaign_class_.end()) return c->second;
  // A class naming a level pins the campaign now; an open one at its first dispatch.
  if (!OpenClass(requested)) campaign_class_[campaign] = requested;
  return requested;
}

void JobQueue::Enqueue(Job& job, bool front, int64_t now_us) {
  job.running = false;
  job.queued = true;
  job.worker.clear();
  job.enqueued_us = now_us;
  job.enqueued_ms = now_us / 1000;
  auto& q = queues_[job.job_class];
  if (front) q.push_front(job.spec.job_id); else q.push_back(job.spec.job_id);
  ++pending_;
  if (job.spec.queue_timeout_ms) {
    next_expiry_ms_ =
        std::min(next_expiry_ms_, job.enqueued_ms + int64_t{job.spec.queue_timeout_ms} + 1);
  }
}

JobQueue::Taken JobQueue::Take(const std::string& worker_class, const std::string& worker,
                               size_t live_workers, int64_t now_us) {
  Taken taken;
  std::vector<Job*> skipped;
  for (const std::string& qname : QueuesServing(worker_class)) {
    auto qit = queues_.find(qname);
    if (qit == queues_.end()) continue;
    auto& q = qit->second;
    while (!taken.job && !q.empty()) {
      auto jit = jobs_.find(q.front());
      q.pop_front();
      if (jit == jobs_.end() || !jit->second->queued) continue;  // completed or cancelled
      Job& cand = *jit->second;
      cand.queued = false;
      --pending_;
      if (cand.crashed_on.count(worker) && live_workers > cand.crashed_on.size()) {
        skipped.push_back(&cand);  // it crashed here before: let another worker try
        continue;
      }
      const std::string& camp = cand.spec.campaign;
      if (OpenClass(cand.job_class) && !camp.empty()) {
        auto pin = campaign_class_.find(camp);
        if (pin == campaign_class_.end()) {
          // The first dispatch pins the campaign to the worker's class, when that names a level.
          // An open worker class ("" or bare) pins nothing: pinned to it, the campaign's jobs
          // would be moved into a queue that workers of other classes also serve (the any-class
          // queue), and taking them would move them back there forever.
          if (!OpenClass(worker_class)) campaign_class_[camp] = worker_class;
        } else if (pin->second != worker_class) {
          cand.job_class = pin->second;
          Enqueue(cand, true, now_us);  // may rehash queues_: `q` is not used after this
          break;
        }
      }
      taken.job = &cand;
    }
    if (taken.job) break;
  }
  for (auto it = skipped.rbegin(); it != skipped.rend(); ++it) Enqueue(**it, true, now_us);
  taken.skipped = !skipped.empty();
  return taken;
}

bool JobQueue::HasQueued(const std::string& worker_class) const {
  for (const std::string& qname : QueuesServing(worker_class)) {
    auto qit = queues_.find(qname);
    if (qit != queues_.end() && !qit->second.empty()) return true;
  }
  return false;
}

void JobQueue::Lease(Job& job, const std::string& worker, int64_t now_ms, uint32_t run_ms) {
  job.running = true;
  job.worker = worker;
  ++job.attempts;
  ++running_;
  job.lease_deadline_ms = now_ms + run_ms + kLeaseGraceMs;
  next_expiry_ms_ = std::min(next_expiry_ms_, job.lease_deadline_ms + 1);
}

JobQueue::Release JobQueue::EndLease(const std::string& id, const std::string& worker,
                                     bool crashed, int64_t now_us) {
  Job* job = Find(id);
  if (!job || !job->running || job->worker != worker) return Release::kNotLeased;
  --running_;
  job->running = false;
  if (crashed) job->crashed_on.insert(worker);
  if (int(job->crashed_on.size()) >= poison_crashes_ || job->attempts >= kMaxAttempts) {
    return Release::kPoison;
  }
  Enqueue(*job, true, now_us);
  return Release::kRequeued;
}

std::vector<std::pair<std::string, bool>> JobQueue::Expired(int64_t now_ms) {
  // The scan is O(jobs in flight): skip it until the earliest deadline can have passed
  // (Lease and Enqueue lower next_expiry_ms_ for new deadlines).
  std::vector<std::pair<std::string, bool>> expired;
  if (now_ms < next_expiry_ms_) return expired;
  int64_t next = std::numeric_limits<int64_t>::max();
  for (auto& [id, job] : jobs_) {
    if (job->running) {
      if (now_ms > job->lease_deadline_ms) expired.push_back({id, true});
      else next = std::min(next, job->lease_deadline_ms + 1);
    } else if (job->spec.queue_timeout_ms) {
      const int64_t due = job->enqueued_ms + int64_t{job->spec.queue_timeout_ms};
      if (now_ms > due) expired.push_back({id, false});
      else next = std::min(next, due + 1);
    }
  }
  next_expiry_ms_ = next;
  return expired;
}

void JobQueue::ExtendLeases(int64_t stall_ms) {
  for (auto& [id, job] : jobs_) {
    if (job->running) job->lease_deadline_ms += stall_ms;
  }
}

std::vector<std::string> JobQueue::Cancel(const std::string& campaign) {
  cancelled_.insert(campaign);
  std::vector<std::string> ids;
  for (auto& [id, job] : jobs_) {
    if (job->spec.campaign == campaign) ids.push_back(id);
  }
  return ids;
}

}  // namespace hlox::broker
