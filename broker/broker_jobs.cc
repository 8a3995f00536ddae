// The broker's worker side: registration, credit-based dispatch with leases, DONE, module
// requests, completion (with coalesced twins), re-queue and POISON, worker loss and timeouts.
// The bookkeeping itself is in JobQueue, WorkerRegistry and ResultCache; this file wires them
// to the sockets.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "broker/broker.h"
#include "common/build_info.h"
#include "common/logging.h"

namespace hlox::broker {

using proto::Command;

namespace {
bool Cacheable(JobStatus s) {
  return s == JobStatus::kOk || s == JobStatus::kWrongOutput || s == JobStatus::kInvalidDecisions;
}
}  // namespace

void Broker::Dispatch() {
  if (queue_.pending() == 0) return;
  for (auto& [cls, slots] : workers_.ready()) {
    size_t rotations = 0;
    while (!slots.empty() && queue_.pending() > 0) {
      Worker* w = workers_.NextReady(slots);
      if (!w) break;
      JobQueue::Taken t = queue_.Take(cls, w->identity, workers_.size(), proto::NowUs());
      if (!t.job && t.skipped) {
        slots.push_back(slots.front());  // this worker may take other jobs later
        slots.pop_front();
        if (++rotations > slots.size()) break;
        continue;
      }
      if (!t.job) {
        if (!queue_.HasQueued(cls)) break;
        continue;
      }
      slots.pop_front();
      Assign(*t.job, *w);
    }
  }
}

void Broker::Assign(Job& job, Worker& w) {
  const uint32_t run_ms = RunTimeoutMs(job, opts_.default_run_timeout_ms);
  queue_.Lease(job, w.identity, proto::NowMs(), run_ms);
  job.dispatched_us = proto::NowUs();
  stats_.metrics().OnDispatched(w.caps.hardware_class,
                                double(job.dispatched_us - job.enqueued_us) * 1e-6);
  workers_.AddLease(w, job.spec.job_id);
  if (!job.cache_key.empty() && OpenClass(job.job_class) && job.class_key.empty()) {
    // Queued for an open class: once it runs on this worker's class (which pins its campaign),
    // a twin submitted now is keyed under that class; let it find this job in flight.
    job.class_key = proto::CacheKey(job.spec, w.caps.hardware_class);
    if (!results_.SetInFlight(job.class_key, job.spec.job_id, /*replace=*/false)) {
      job.class_key.clear();
    }
  }
  std::string text;
  if (workers_.NeedsModule(w, job.spec.module_hash)) text = modules_[job.spec.module_hash];
  SendTo(w.identity, Command::kJob, proto::Encode(JobMsgFor(job, run_ms, std::move(text))), true);
}

void Broker::Complete(const std::string& job_id, std::string record, JobStatus status,
                      const proto::RecordSummary* measured) {
  std::unique_ptr<Job> job = queue_.Remove(job_id);
  if (!job) return;
  std::string status_name(proto::StatusWireName(status));
  const int64_t now_us = proto::NowUs();
  stats_.RecordFinished(status_name, double(now_us - job->submitted_us) * 1e-6, now_us / 1000);
  if (status == JobStatus::kOk && measured) stats_.RecordSpread(*measured);
  std::string key = job->cache_key;
  results_.EndInFlight(job->class_key, job_id);
  if (!key.empty()) {
    results_.EndInFlight(key, job_id);
    if (!Cacheable(status)) {
      key.clear();
    } else {
      results_.Remember(key, job_id);
      // A job queued for an open class is also cached under the class that actually ran it.
      Worker* w = workers_.Find(job->worker);
      if (OpenClass(job->job_class) && w) {
        key = proto::CacheKey(job->spec, w->caps.hardware_class);
        results_.Remember(key, job_id);
      }
    }
  }
  const bool durable = store_->durable();  // memory-only: nothing to commit, no copies
  if (durable) {
    to_commit_.push_back({job_id, job->spec.campaign, key, status_name, record, job->attempts});
  }
  acks_.push_back({job->agent, {job_id, job->attempts, job->from_cache, record}});
  for (const std::string& f : job->followers) {
    std::unique_ptr<Job> fj = queue_.Remove(f);
    if (!fj) continue;
    const int64_t f_now_us = proto::NowUs();
    stats_.RecordFinished(status_name, double(f_now_us - fj->submitted_us) * 1e-6,
                          f_now_us / 1000);
    if (durable) to_commit_.push_back({f, fj->spec.campaign, "", status_name, record, 0});
    acks_.push_back({fj->agent, {f, 0, true, record}});
    results_.AddDone(f, DoneJob{record, fj->spec.campaign, status_name, 0, false});
  }
  results_.AddDone(job_id, DoneJob{std::move(record), job->spec.campaign, std::move(status_name),
                                   job->attempts, false});
}

void Broker::CompleteWith(const std::string& job_id, JobStatus status, const std::string& msg) {
  const Job* job = queue_.Find(job_id);
  if (!job) return;
  ResultRecord r;
  r.status = status;
  r.message = msg;
  r.text_hash = job->spec.module_hash;  // the broker never parses: no identity to give
  r.pipeline = job->spec.pipeline;
  r.provenance.worker_id = job->worker;
  Complete(job_id, proto::EncodeRecord(r), status);
}

void Broker::ReleaseCredit(Worker& w, const std::string& job_id) {
  if (workers_.EndLease(w, job_id)) {
    log::broker().info("worker {} drained", w.caps.worker_id);
    const std::string identity = w.identity;
    SendTo(identity, Command::kDisconnect, std::string(), false);
    workers_.Remove(identity);
  }
}

void Broker::RequeueOrPoison(const std::string& job_id, const std::string& worker_id,
                             bool crashed) {
  switch (queue_.EndLease(job_id, worker_id, crashed, proto::NowUs())) {
    case JobQueue::Release::kNotLeased: return;
    case JobQueue::Release::kRequeued: ++stats_.requeued; return;
    case JobQueue::Release::kPoison: {
      const Job& job = *queue_.Find(job_id);
      CompleteWith(job_id, JobStatus::kPoison,
                   absl::StrCat("crashed ", job.crashed_on.size(), " workers in ", job.attempts,
                                " attempts"));
      return;
    }
  }
}

void Broker::OnReady(const std::string& identity, std::string_view body) {
  absl::StatusOr<proto::ReadyMsg> m = proto::DecodeReady(body);
  if (!m.ok()) {
    Reject(identity, proto::ErrorCodeFor(m.status()), std::string(m.status().message()));
    return;
  }
  if (m->protocol != proto::kVersion) {
    // A worker of another protocol would misread JOBs: refuse it by name, and it stops.
    if (workers_.Find(identity)) LoseWorker(identity, "announced another protocol");
    const std::string why = absl::StrCat(
        "worker ", m->worker_id, " (build ", m->build.empty() ? "unknown" : m->build,
        ") speaks protocol ", m->protocol, ", this broker speaks ", proto::kVersion,
        " (build ", AnnouncedBuildId(), "); run a matching hlox build");
    log::broker().warn("refused worker: {}", why);
    Reject(identity, proto::kErrBadVersion, why);
    return;
  }
  if (workers_.Find(identity)) LoseWorker(identity, "re-registered");
  const Worker& w = workers_.Register(identity, std::move(*m), proto::NowMs());
  log::broker().info("worker {} registered: host {} class {} isa {} cpu '{}' credit {} version {} "
                     "build {}", w.caps.worker_id, w.caps.host, w.caps.hardware_class, w.caps.isa,
                     w.caps.cpu, w.caps.credit, w.caps.version, w.caps.build);
  SendTo(identity, Command::kHeartbeat, proto::Encode(proto::HeartbeatMsg{instance_}), true);
}

void Broker::OnDone(const std::string& identity, std::string_view body) {
  Worker* w = workers_.Find(identity);
  if (!w) {
    SendTo(identity, Command::kReregister, std::string(), false);
    return;
  }
  // The record is routed and stored as the bytes received: the reader checks it and reads the
  // few fields needed (record_scan.h), with no copies.
  absl::StatusOr<proto::DoneView> m = done_reader_->ReadDone(body);
  if (!m.ok()) {
    Reject(identity, proto::ErrorCodeFor(m.status()), std::string(m.status().message()));
    return;
  }
  const std::string job_id(m->job_id);
  Job* job = queue_.Find(job_id);
  // A DONE of an older attempt from the worker that now holds a newer one (it was lost, its
  // job re-queued, and it rejoined and got the job again) is stale, and so is its credit: the
  // lease it would end is the newer attempt's, which must stay until that attempt's DONE or
  // the worker's loss.
  if (job && job->running && job->worker == identity && job->attempts != m->attempt) {
    log::broker().info("stale DONE of job {} attempt {} (attempt {} is running) ignored", job_id,
                       m->attempt, job->attempts);
    return;
  }
  if (job && job->running && job->worker == identity && job->attempts == m->attempt) {
    stats_.metrics().OnRunEnded(w->caps.hardware_class,
                                double(proto::NowUs() - job->dispatched_us) * 1e-6);
    absl::StatusOr<proto::RecordSummary> rec = done_reader_->Summarize(m->record);
    if (m->crashed) {
      ++w->failed;
      log::broker().warn("job {} crashed worker {}", job_id, w->caps.worker_id);
      RequeueOrPoison(job_id, identity, true);
    } else if (!rec.ok()) {
      ++w->failed;
      CompleteWith(job_id, JobStatus::kRunError,
                   absl::StrCat("worker sent a bad record: ", rec.status().message()));
    } else {
      (rec->status == JobStatus::kOk ? w->done : w->failed)++;
      Complete(job_id, std::string(m->record), rec->status, &*rec);
    }
  }
  // Completing may have sent messages that lost this worker: look it up again.
  if (Worker* still = workers_.Find(identity)) ReleaseCredit(*still, job_id);
}

void Broker::OnNeedModule(const std::string& identity, std::string_view body) {
  Worker* w = workers_.Find(identity);
  if (!w) {
    SendTo(identity, Command::kReregister, std::string(), false);
    return;
  }
  absl::StatusOr<proto::NeedModuleMsg> m = proto::DecodeNeedModule(body);
  if (!m.ok()) {
    Reject(identity, proto::ErrorCodeFor(m.status()), std::string(m.status().message()));
    return;
  }
  workers_.ForgetModule(*w, m->module_hash);
  const Job* job = queue_.Find(m->job_id);
  auto mod = modules_.find(m->module_hash);
  if (!job || mod == modules_.end() || job->worker != identity || job->attempts != m->attempt) {
    return;  // stale request: the job moved on
  }
  workers_.NeedsModule(*w, m->module_hash);  // it has it once this JOB arrives
  const uint32_t run_ms = RunTimeoutMs(*job, opts_.default_run_timeout_ms);
  SendTo(identity, Command::kJob, proto::Encode(JobMsgFor(*job, run_ms, mod->second)), true);
}

void Broker::LoseWorker(const std::string& identity, const char* why) {
  const Worker* w = workers_.Find(identity);
  if (!w) return;
  const std::string name = w->caps.worker_id;
  std::vector<std::string> leased = workers_.Lose(identity, proto::NowMs());
  log::broker().warn("worker {} lost ({}), re-queueing {} jobs", name, why, leased.size());
  ++stats_.lost_workers;
  stats_.lease_expiries += static_cast<int64_t>(leased.size());
  // A job that was running when its worker died may have killed it: it counts as a crash.
  for (const std::string& id : leased) RequeueOrPoison(id, identity, true);
}

void Broker::ExpireJobs(int64_t now_ms) {
  for (auto& [id, running] : queue_.Expired(now_ms)) {
    if (running) {
      const Job* job = queue_.Find(id);
      if (!job) continue;  // finished by an earlier expiry in this round
      ++stats_.lease_expiries;
      const std::string wid = job->worker;
      CompleteWith(id, JobStatus::kTimeout, "lease expired: no result within the run timeout");
      if (Worker* w = workers_.Find(wid)) ReleaseCredit(*w, id);
    } else {
      CompleteWith(id, JobStatus::kTimeout, "queue wait timeout");
    }
  }
}

}  // namespace hlox::broker
