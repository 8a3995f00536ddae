// The broker's job and worker bookkeeping: submit (store lookup, result cache, coalescing),
// per-class queues, credit-based dispatch with leases, completion, re-queue and POISON, worker
// registration and loss, timeouts.
#include <algorithm>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "broker/broker.h"
#include "common/logging.h"
#include "protocol/hardware_class.h"

namespace hlox::broker {

using proto::Command;

namespace {
// Whether a job's class leaves the level open: empty (any worker) or bare ("cpu": that class
// at any level, protocol/hardware_class.h). Such a job takes the class of the worker that runs
// it, and a campaign of such jobs is pinned to the first class one runs on.
bool OpenClass(const std::string& job_class) {
  return job_class.empty() || !proto::HardwareClassIsa(job_class).has_value();
}

// The queues a worker of class `cls` takes jobs from, in order: its class, that class without
// its level (bare pins), then jobs for any class.
std::vector<std::string> QueuesServing(const std::string& cls) {
  std::vector<std::string> names{cls};
  const std::string base(proto::HardwareClassBase(cls));
  if (base != cls) names.push_back(base);
  if (!cls.empty()) names.emplace_back();
  return names;
}

bool Cacheable(JobStatus s) {
  return s == JobStatus::kOk || s == JobStatus::kWrongOutput || s == JobStatus::kInvalidDecisions;
}
}  // namespace

void Broker::OnSubmit(const std::string& agent, std::string_view body) {
  absl::StatusOr<proto::SubmitMsg> m = proto::DecodeSubmit(body);
  if (!m.ok()) {
    Reject(agent, proto::ErrorCodeFor(m.status()), std::string(m.status().message()), proto::PeekJobId(body));
    return;
  }
  const std::string id = m->job_id;  // a copy: *m is moved into the job below
  if (auto d = done_.find(id); d != done_.end()) {  // idempotent resubmit: answer from the store
    absl::StatusOr<std::string> record = RecordOf(id, d->second);
    if (record.ok()) {
      acks_.push_back({agent, {id, d->second.attempts, false, std::move(*record)}});
      return;
    }
    log::broker().error("reading stored result of {}: {}; running it again", id,
                        std::string(record.status().message()));
    EraseDone(d);
  }
  if (auto j = jobs_.find(id); j != jobs_.end()) {  // already queued or running
    j->second->agent = agent;
    return;
  }
  if (!m->module_text.empty()) {
    // Clients that cannot compute the hash send "" with the text; the broker fills it in.
    if (m->module_hash.empty()) m->module_hash = proto::TextHash(m->module_text);
    if (proto::TextHash(m->module_text) != m->module_hash) {
      SendError(agent, id, proto::kErrBadModule, "module text does not match module_hash");
      return;
    }
    if (modules_.find(m->module_hash) == modules_.end()) {
      if (absl::Status st = store_->PutModule(m->module_hash, m->module_text); !st.ok()) {
        log::broker().error("storing module: {}", std::string(st.message()));
      }
      modules_.emplace(m->module_hash, std::move(m->module_text));
    }
    m->module_text.clear();
  } else if (modules_.find(m->module_hash) == modules_.end()) {
    SendError(agent, id, proto::kErrUnknownModule, "send the module text with this job");
    return;
  }
  if (pending_count_ >= opts_.max_pending) {
    SendError(agent, id, proto::kErrFull, "broker queue is full; retry later");
    return;
  }
  auto job = std::make_unique<Job>();
  job->agent = agent;
  job->submitted_us = proto::NowUs();
  job->enqueued_ms = job->submitted_us / 1000;
  std::string campaign = m->campaign;
  if (auto c = campaign_class_.find(campaign); !campaign.empty() && c != campaign_class_.end()) {
    job->job_class = c->second;
  } else {
    job->job_class = m->hardware_class;
    // A class naming a level pins the campaign now; an open one at its first dispatch.
    if (!campaign.empty() && !OpenClass(m->hardware_class)) campaign_class_[campaign] = m->hardware_class;
  }
  job->spec = std::move(*m);
  Job& j = *job;
  jobs_.emplace(id, std::move(job));
  if (!campaign.empty() && cancelled_.count(campaign)) {
    CompleteWith(id, JobStatus::kCancelled, "campaign cancelled");
    return;
  }
  if (j.spec.use_cache && proto::KindCacheable(j.spec.kind)) {
    j.cache_key = proto::CacheKey(j.spec, j.job_class);
    if (auto c = cache_.find(j.cache_key); c != cache_.end()) {
      auto d = done_.find(c->second);
      absl::StatusOr<std::string> record =
          d != done_.end() ? RecordOf(d->first, d->second) : absl::NotFoundError("gone");
      if (record.ok()) {
        ++cache_hits_;
        j.cache_key.clear();  // this job's row must not replace the cache entry
        j.from_cache = true;
        Complete(id, std::move(*record), *proto::ParseStatusWireName(d->second.status));
        return;
      }
    }
    if (auto p = inflight_keys_.find(j.cache_key); p != inflight_keys_.end()) {
      auto primary = jobs_.find(p->second);
      if (primary != jobs_.end()) {
        ++cache_hits_;
        primary->second->followers.push_back(id);
        j.cache_key.clear();
        return;
      }
    }
    inflight_keys_[j.cache_key] = id;
  }
  Enqueue(j, false);
}

void Broker::Enqueue(Job& job, bool front) {
  job.running = false;
  job.queued = true;
  job.worker.clear();
  job.enqueued_us = proto::NowUs();
  job.enqueued_ms = job.enqueued_us / 1000;
  auto& q = queues_[job.job_class];
  if (front) q.push_front(job.spec.job_id); else q.push_back(job.spec.job_id);
  ++pending_count_;
  if (job.spec.queue_timeout_ms) {
    next_expiry_ms_ =
        std::min(next_expiry_ms_, job.enqueued_ms + int64_t{job.spec.queue_timeout_ms} + 1);
  }
}

void Broker::Dispatch() {
  if (pending_count_ == 0) return;
  for (auto& [cls, slots] : ready_) {
    size_t rotations = 0;
    while (!slots.empty() && pending_count_ > 0) {
      auto wit = workers_.find(slots.front());
      if (wit == workers_.end() || wit->second.draining ||
          wit->second.jobs.size() >= wit->second.caps.credit) {
        slots.pop_front();  // stale slot
        continue;
      }
      Job* job = nullptr;
      std::vector<Job*> skipped;
      const std::vector<std::string> queue_names = QueuesServing(cls);
      for (const std::string& qname : queue_names) {
        auto qit = queues_.find(qname);
        if (qit == queues_.end()) continue;
        auto& q = qit->second;
        while (!job && !q.empty()) {
          auto jit = jobs_.find(q.front());
          q.pop_front();
          if (jit == jobs_.end() || !jit->second->queued) continue;  // completed or cancelled
          Job& cand = *jit->second;
          cand.queued = false;
          --pending_count_;
          if (cand.crashed_on.count(wit->first) && workers_.size() > cand.crashed_on.size()) {
            skipped.push_back(&cand);  // it crashed here before: let another worker try
            continue;
          }
          const std::string& camp = cand.spec.campaign;
          if (OpenClass(cand.job_class) && !camp.empty()) {
            auto pin = campaign_class_.find(camp);
            if (pin == campaign_class_.end()) {
              campaign_class_[camp] = cls;  // first dispatch pins the campaign's class
            } else if (pin->second != cls) {
              cand.job_class = pin->second;
              Enqueue(cand, true);  // may rehash queues_: look the queue up again
              break;
            }
          }
          job = &cand;
        }
        if (job) break;
      }
      for (auto it = skipped.rbegin(); it != skipped.rend(); ++it) Enqueue(**it, true);
      if (!job && !skipped.empty()) {
        slots.push_back(slots.front());  // this worker may take other jobs later
        slots.pop_front();
        if (++rotations > slots.size()) break;
        continue;
      }
      if (!job) {
        bool more = false;
        for (const std::string& qname : queue_names) {
          auto qit = queues_.find(qname);
          more |= qit != queues_.end() && !qit->second.empty();
        }
        if (!more) break;
        continue;
      }
      slots.pop_front();
      Assign(*job, wit->second);
    }
  }
}

bool Broker::Assign(Job& job, Worker& w) {
  job.running = true;
  job.worker = w.identity;
  ++job.attempts;
  ++running_count_;
  job.dispatched_us = proto::NowUs();
  job_metrics_.OnDispatched(w.caps.hardware_class, double(job.dispatched_us - job.enqueued_us) * 1e-6);
  uint32_t run_ms = job.spec.run_timeout_ms ? job.spec.run_timeout_ms : opts_.default_run_timeout_ms;
  job.lease_deadline_ms = proto::NowMs() + run_ms + kLeaseGraceMs;
  next_expiry_ms_ = std::min(next_expiry_ms_, job.lease_deadline_ms + 1);
  if (w.jobs.insert(job.spec.job_id).second && w.jobs.size() == 1 && w.local) ++local_busy_;
  if (!job.cache_key.empty() && OpenClass(job.job_class) && job.class_key.empty()) {
    // Queued for an open class: once it runs on this worker's class (which pins its campaign),
    // a twin submitted now is keyed under that class; let it find this job in flight.
    job.class_key = proto::CacheKey(job.spec, w.caps.hardware_class);
    if (!inflight_keys_.emplace(job.class_key, job.spec.job_id).second) job.class_key.clear();
  }
  proto::JobMsg jm{job.spec.job_id, job.attempts, job.spec.module_hash, "", job.spec.pipeline,
                   job.spec.decisions, run_ms, job.spec.kind, job.spec.paired};
  if (w.modules.insert(job.spec.module_hash).second) jm.module_text = modules_[job.spec.module_hash];
  SendTo(w.identity, Command::kJob, proto::Encode(jm), true);
  return true;
}

void Broker::Complete(const std::string& job_id, std::string record, JobStatus status,
                      const proto::RecordSummary* measured) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  std::unique_ptr<Job> job = std::move(it->second);
  jobs_.erase(it);
  if (job->running) --running_count_;
  if (job->queued) --pending_count_;  // its queue entry is skipped lazily
  std::string status_name(proto::StatusWireName(status));
  ++completed_total_;
  RecordFinished(status_name, double(proto::NowUs() - job->submitted_us) * 1e-6);
  if (status == JobStatus::kOk && measured) RecordSpread(*measured);
  std::string key = job->cache_key;
  if (auto k = inflight_keys_.find(job->class_key); k != inflight_keys_.end() && k->second == job_id) {
    inflight_keys_.erase(k);
  }
  if (!key.empty()) {
    inflight_keys_.erase(key);
    if (!Cacheable(status)) {
      key.clear();
    } else {
      cache_[key] = job_id;
      // A job queued for an open class is also cached under the class that actually ran it.
      auto w = workers_.find(job->worker);
      if (OpenClass(job->job_class) && w != workers_.end()) {
        key = proto::CacheKey(job->spec, w->second.caps.hardware_class);
        cache_[key] = job_id;
      }
    }
  }
  const bool durable = store_->durable();  // memory-only: nothing to commit, no copies
  if (durable) {
    to_commit_.push_back({job_id, job->spec.campaign, key, status_name, record, job->attempts});
  }
  acks_.push_back({job->agent, {job_id, job->attempts, job->from_cache, record}});
  for (const std::string& f : job->followers) {
    auto fit = jobs_.find(f);
    if (fit == jobs_.end()) continue;
    Job& fj = *fit->second;
    ++completed_total_;
    RecordFinished(status_name, double(proto::NowUs() - fj.submitted_us) * 1e-6);
    if (durable) to_commit_.push_back({f, fj.spec.campaign, "", status_name, record, 0});
    acks_.push_back({fj.agent, {f, 0, true, record}});
    AddDone(f, DoneJob{record, fj.spec.campaign, status_name, 0, false});
    jobs_.erase(fit);
  }
  AddDone(job_id, DoneJob{std::move(record), job->spec.campaign, std::move(status_name),
                          job->attempts, false});
}

void Broker::CompleteWith(const std::string& job_id, JobStatus status, const std::string& msg) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  ResultRecord r;
  r.status = status;
  r.message = msg;
  r.text_hash = it->second->spec.module_hash;  // the broker never parses: no identity to give
  r.pipeline = it->second->spec.pipeline;
  r.provenance.worker_id = it->second->worker;
  Complete(job_id, proto::EncodeRecord(r), status);
}

void Broker::ReleaseCredit(Worker& w, const std::string& job_id) {
  if (w.jobs.erase(job_id)) {
    if (w.jobs.empty() && w.local) --local_busy_;
    if (!w.draining) ready_[w.caps.hardware_class].push_back(w.identity);
  }
  if (w.draining && w.jobs.empty()) {
    log::broker().info("worker {} drained", w.caps.worker_id);
    SendTo(w.identity, Command::kDisconnect, std::string(), false);
    workers_.erase(w.identity);
  }
}

void Broker::RequeueOrPoison(const std::string& job_id, const std::string& worker_id,
                             bool crashed) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  Job& job = *it->second;
  if (!job.running || job.worker != worker_id) return;
  --running_count_;
  job.running = false;
  if (crashed) job.crashed_on.insert(worker_id);
  if (int(job.crashed_on.size()) >= opts_.poison_crashes || job.attempts >= kMaxAttempts) {
    CompleteWith(job_id, JobStatus::kPoison,
                 absl::StrCat("crashed ", job.crashed_on.size(), " workers in ", job.attempts,
                              " attempts"));
    return;
  }
  ++requeued_;
  Enqueue(job, true);
}

void Broker::OnReady(const std::string& identity, std::string_view body) {
  absl::StatusOr<proto::ReadyMsg> m = proto::DecodeReady(body);
  if (!m.ok()) {
    Reject(identity, proto::ErrorCodeFor(m.status()), std::string(m.status().message()));
    return;
  }
  if (workers_.count(identity)) LoseWorker(identity, "re-registered");
  Worker& w = workers_[identity];
  w.identity = identity;
  w.caps = std::move(*m);
  w.last_seen_ms = w.registered_ms = proto::NowMs();
  w.local = w.caps.host == host_;
  for (uint32_t i = 0; i < w.caps.credit; ++i) ready_[w.caps.hardware_class].push_back(identity);
  log::broker().info("worker {} registered: host {} class {} isa {} cpu '{}' credit {} version {}",
                     w.caps.worker_id, w.caps.host, w.caps.hardware_class, w.caps.isa, w.caps.cpu,
                     w.caps.credit, w.caps.version);
  SendTo(identity, Command::kHeartbeat, proto::Encode(proto::HeartbeatMsg{instance_}), true);
}

void Broker::OnDone(const std::string& identity, std::string_view body) {
  auto wit = workers_.find(identity);
  if (wit == workers_.end()) {
    SendTo(identity, Command::kReregister, std::string(), false);
    return;
  }
  // The record is routed and stored as the bytes received: a bounded scan checks it and reads
  // the few fields needed (record_scan.h). The bench baseline decodes everything, as before.
  std::optional<proto::DoneMsg> full;
  absl::StatusOr<proto::DoneView> m = absl::UnknownError("");
  if (opts_.full_record_decode) {
    absl::StatusOr<proto::DoneMsg> d = proto::DecodeDone(body);
    if (d.ok()) {
      full = std::move(*d);
      m = proto::DoneView{full->job_id, full->attempt, full->crashed, full->record};
    } else {
      m = d.status();
    }
  } else {
    m = proto::ScanDone(body);
  }
  if (!m.ok()) {
    Reject(identity, proto::ErrorCodeFor(m.status()), std::string(m.status().message()));
    return;
  }
  Worker& w = wit->second;
  const std::string job_id(m->job_id);
  auto jit = jobs_.find(job_id);
  bool current = jit != jobs_.end() && jit->second->running && jit->second->worker == identity &&
                 jit->second->attempts == m->attempt;
  if (current) {
    job_metrics_.OnRunEnded(w.caps.hardware_class,
                            double(proto::NowUs() - jit->second->dispatched_us) * 1e-6);
    absl::StatusOr<proto::RecordSummary> rec = SummarizeRecord(m->record);
    if (m->crashed) {
      ++w.failed;
      log::broker().warn("job {} crashed worker {}", job_id, w.caps.worker_id);
      RequeueOrPoison(job_id, identity, true);
    } else if (!rec.ok()) {
      ++w.failed;
      CompleteWith(job_id, JobStatus::kRunError,
                   absl::StrCat("worker sent a bad record: ", rec.status().message()));
    } else {
      (rec->status == JobStatus::kOk ? w.done : w.failed)++;
      Complete(job_id, std::string(m->record), rec->status, &*rec);
    }
  }
  if (workers_.count(identity)) ReleaseCredit(workers_[identity], job_id);
}

absl::StatusOr<proto::RecordSummary> Broker::SummarizeRecord(std::string_view record) const {
  if (!opts_.full_record_decode) return proto::ScanRecord(record);
  absl::StatusOr<ResultRecord> r = proto::DecodeRecord(record);
  if (!r.ok()) return r.status();
  return proto::RecordSummary{r->status, r->cost.median, r->cost.mad, r->cost.samples.size()};
}

void Broker::OnNeedModule(const std::string& identity, std::string_view body) {
  auto wit = workers_.find(identity);
  if (wit == workers_.end()) {
    SendTo(identity, Command::kReregister, std::string(), false);
    return;
  }
  absl::StatusOr<proto::NeedModuleMsg> m = proto::DecodeNeedModule(body);
  if (!m.ok()) {
    Reject(identity, proto::ErrorCodeFor(m.status()), std::string(m.status().message()));
    return;
  }
  wit->second.modules.erase(m->module_hash);
  auto jit = jobs_.find(m->job_id);
  auto mod = modules_.find(m->module_hash);
  if (jit == jobs_.end() || mod == modules_.end() || jit->second->worker != identity ||
      jit->second->attempts != m->attempt) {
    return;  // stale request: the job moved on
  }
  Job& job = *jit->second;
  proto::JobMsg jm{job.spec.job_id, job.attempts, job.spec.module_hash, mod->second,
                   job.spec.pipeline, job.spec.decisions,
                   job.spec.run_timeout_ms ? job.spec.run_timeout_ms : opts_.default_run_timeout_ms,
                   job.spec.kind, job.spec.paired};
  wit->second.modules.insert(m->module_hash);
  SendTo(identity, Command::kJob, proto::Encode(jm), true);
}

void Broker::LoseWorker(const std::string& identity, const char* why) {
  auto wit = workers_.find(identity);
  if (wit == workers_.end()) return;
  std::vector<std::string> leased(wit->second.jobs.begin(), wit->second.jobs.end());
  log::broker().warn("worker {} lost ({}), re-queueing {} jobs", wit->second.caps.worker_id, why,
                     leased.size());
  ++lost_workers_;
  lease_expiries_ += static_cast<int64_t>(leased.size());
  lost_recent_.push_back({proto::NowMs(), wit->second});
  if (lost_recent_.size() > 256) lost_recent_.erase(lost_recent_.begin());
  if (wit->second.local && !wit->second.jobs.empty()) --local_busy_;
  workers_.erase(wit);
  // A job that was running when its worker died may have killed it: it counts as a crash.
  for (const std::string& id : leased) RequeueOrPoison(id, identity, true);
}

void Broker::ExpireJobs(int64_t now_ms) {
  // The scan is O(jobs in flight): skip it until the earliest deadline can have passed
  // (Assign and Enqueue lower next_expiry_ms_ for new deadlines).
  if (now_ms < next_expiry_ms_) return;
  std::vector<std::pair<std::string, bool>> expired;  // (job, was running)
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
  for (auto& [id, running] : expired) {
    if (running) {
      ++lease_expiries_;
      std::string wid = jobs_[id]->worker;
      CompleteWith(id, JobStatus::kTimeout, "lease expired: no result within the run timeout");
      if (auto w = workers_.find(wid); w != workers_.end()) ReleaseCredit(w->second, id);
    } else {
      CompleteWith(id, JobStatus::kTimeout, "queue wait timeout");
    }
  }
}

}  // namespace hlox::broker
